/*
 * readFile(path) -> Buffer, or -errno: a whole file in memory the kernel can fault in with a few huge
 * pages (docs/design.md, "The status cache"). On the VMs these tools run on, the first touch of a
 * fresh 4 KiB page costs ~13 us (the hypervisor backs guest memory lazily), so reading the 0.85 MB
 * cache of a 1 000-run listing into a plain buffer cost ~4 ms in page faults alone; into memory
 * advised MADV_HUGEPAGE it costs ~0.3 ms. Where transparent huge pages are off the advice is ignored
 * and this is an ordinary read. Small files (below 256 KiB) are read into an ordinary Node buffer.
 * The memory is given back when the Buffer is collected.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "addon.h"

#define HUGE_PAGE ((size_t)2 << 20)
#define SMALL_FILE ((size_t)256 << 10)

static void unmap(napi_env env, void *data, void *length) {
  (void)env;
  munmap(data, (size_t)(uintptr_t)length);
}

/* Memory for `size` bytes at a huge-page boundary, advised to use huge pages; NULL when mmap fails. */
static char *huge_memory(size_t size, size_t *length) {
  size_t len = (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  char *raw = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  char *p = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
  if (p > raw) munmap(raw, p - raw);
  munmap(p + len, raw + HUGE_PAGE - p);
  madvise(p, len, MADV_HUGEPAGE);
  *length = len;
  return p;
}

/* Reads up to size bytes; returns how many (a file can shrink meanwhile), or -errno. */
static ssize_t read_all(int fd, char *into, size_t size) {
  size_t got = 0;
  while (got < size) {
    ssize_t n = read(fd, into + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    if (n == 0) break;
    got += n;
  }
  return got;
}

static napi_value error_number(napi_env env, int err) {
  napi_value v;
  napi_create_int32(env, -err, &v);
  return v;
}

napi_value ReadFile(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg, result = NULL;
  char *path = NULL;
  if (napi_get_cb_info(env, info, &argc, &arg, NULL, NULL) != napi_ok || argc != 1 || !(path = c_string(env, arg))) {
    napi_throw_type_error(env, NULL, "readFile(path: string)");
    return NULL;
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  free(path);
  if (fd < 0) return error_number(env, errno);
  struct stat st;
  int err = fstat(fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : !S_ISREG(st.st_mode) ? EINVAL : 0;
  if (err) {
    close(fd);
    return error_number(env, err);
  }
  size_t size = st.st_size;
  if (size < SMALL_FILE) {
    void *data;
    if (napi_create_buffer(env, size, &data, &result) == napi_ok) {
      ssize_t n = read_all(fd, data, size);
      if (n < 0) result = error_number(env, -n);
      else if ((size_t)n < size) napi_create_buffer_copy(env, n, data, NULL, &result);
    }
  } else {
    size_t length;
    char *data = huge_memory(size, &length);
    ssize_t n = data ? read_all(fd, data, size) : -ENOMEM;
    if (n < 0 || napi_create_external_buffer(env, n, data, unmap, (void *)(uintptr_t)length, &result) != napi_ok) {
      if (data) munmap(data, length);
      result = error_number(env, n < 0 ? -n : ENOMEM);
    }
  }
  close(fd);
  return result;
}
