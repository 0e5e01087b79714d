/*
 * statProbe(base, paths, keys, ok) -> how many paths it probed: whether files still are what a cache
 * remembers of them, for many files in one call (docs/design.md, "The status cache").
 *   paths  bytes: paths relative to the directory base, each ended by a NUL byte
 *   keys   Float64Array, four per path: inode, size, ctime seconds, ctime nanoseconds (what Node's
 *          fs.statSync gives); NaN in the first means "must not exist"
 *   ok     Uint8Array, one per path, set to 1 where the path holds what its key says, else 0
 * A listing of a thousand done names proves two thousand such keys. Through Node's fs binding each
 * stat cost ~8 us here (path string to C, a request object, the numbers into an array, JIT-compiling
 * the loop that compares them, and the garbage), of which the syscall is ~3.5: one call, fstatat(2)
 * relative to one open directory, and the comparison in C take the rest away. A long list is split in
 * two halves, the second probed by a thread of its own where a second CPU is there to run it: 2 000
 * paths took 7-8.5 ms in one thread of a fresh process here, 4-6 ms in two. The same semantics in
 * plain Node: lib/registry/stat-key.ts (probeKeys), used when the addon is not built.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "addon.h"

static bool holds(int dfd, int open_error, const char *path, const double *key) {
  struct stat st;
  int err = open_error;
  if (!err) err = fstatat(dfd, path, &st, 0) == 0 ? 0 : errno;
  if (isnan(key[0])) return err == ENOENT || err == ENOTDIR;
  return !err && (double)st.st_ino == key[0] && (double)st.st_size == key[1] && (double)st.st_ctim.tv_sec == key[2] &&
         (double)st.st_ctim.tv_nsec == key[3];
}

/* Probes paths [from, count) of the list, the first of them at path. */
struct half {
  int dfd;
  int open_error;
  const char *path;
  size_t from;
  size_t count;
  const double *keys;
  unsigned char *ok;
};

/* Below this many paths a second thread costs more than it saves. */
#define SPLIT_FROM 512

static void *probe_half(void *arg) {
  struct half *h = arg;
  const char *p = h->path;
  for (size_t i = h->from; i < h->count; i++) {
    h->ok[i] = holds(h->dfd, h->open_error, p, h->keys + 4 * i);
    p += strlen(p) + 1;
  }
  return NULL;
}

static int cpus(void) {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

static bool typed_array(napi_env env, napi_value value, napi_typedarray_type want, void **data, size_t *length) {
  napi_typedarray_type type;
  return napi_get_typedarray_info(env, value, &type, length, data, NULL, NULL) == napi_ok && type == want;
}

napi_value StatProbe(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value args[4];
  char *base = NULL;
  void *paths, *keys, *ok;
  size_t paths_len, keys_len, ok_len;
  if (napi_get_cb_info(env, info, &argc, args, NULL, NULL) != napi_ok || argc != 4 || !(base = c_string(env, args[0])) ||
      !typed_array(env, args[1], napi_uint8_array, &paths, &paths_len) || !typed_array(env, args[2], napi_float64_array, &keys, &keys_len) ||
      !typed_array(env, args[3], napi_uint8_array, &ok, &ok_len)) {
    free(base);
    napi_throw_type_error(env, NULL, "statProbe(base: string, paths: Uint8Array, keys: Float64Array, ok: Uint8Array)");
    return NULL;
  }
  /* O_PATH: a directory that may be searched but not read (mode --x) still serves as the base. */
  int dfd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
  int open_error = dfd < 0 ? errno : 0;
  free(base);
  struct half first = {dfd, open_error, paths, 0, 0, keys, ok}, second = first;
  /* How many paths there are room for, and where the second half starts. */
  const char *p = paths, *end = (const char *)paths + paths_len;
  size_t n = 0, limit = ok_len < keys_len / 4 ? ok_len : keys_len / 4;
  for (; n < limit; n++) {
    const char *nul = memchr(p, 0, end - p);
    if (!nul) break;
    p = nul + 1;
  }
  first.count = n;
  pthread_t thread;
  bool threaded = false;
  if (n >= SPLIT_FROM && cpus() > 1) {
    second.from = first.count = n / 2;
    p = paths;
    for (size_t i = 0; i < first.count; i++) p = (const char *)memchr(p, 0, end - p) + 1;
    second.path = p;
    second.count = n;
    threaded = pthread_create(&thread, NULL, probe_half, &second) == 0;
    if (!threaded) first.count = n;
  }
  probe_half(&first);
  if (threaded) pthread_join(thread, NULL);
  if (dfd >= 0) close(dfd);
  napi_value count;
  napi_create_double(env, (double)n, &count);
  return count;
}
