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
 * relative to one open directory, and the comparison in C take the rest away. The same semantics in
 * plain Node: lib/registry/stat-key.ts (probeKeys), used when the addon is not built.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
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
  const char *p = paths, *end = (const char *)paths + paths_len;
  size_t n = 0;
  for (; n < ok_len && 4 * n + 4 <= keys_len; n++) {
    const char *nul = memchr(p, 0, end - p);
    if (!nul) break;
    ((unsigned char *)ok)[n] = holds(dfd, open_error, p, (const double *)keys + 4 * n);
    p = nul + 1;
  }
  if (dfd >= 0) close(dfd);
  napi_value count;
  napi_create_double(env, (double)n, &count);
  return count;
}
