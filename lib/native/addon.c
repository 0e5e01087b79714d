/*
 * The Node-API addon of subagents: what Node 20 has no API for, or no fast one. Built by
 * scripts/native.mjs into dist/bin/native.node; optional — lib/native/addon.ts loads it, and every
 * caller has a plain-Node way when it is missing.
 *   spawn      posix_spawn(3) (spawn.c)
 *   statProbe  many stat(2)s compared against expected keys in one call (stat-probe.c)
 *   readFile   a whole file into memory that huge pages can back (read-file.c)
 */
#include <stdlib.h>
#include <string.h>
#include "addon.h"

char *c_string(napi_env env, napi_value value) {
  size_t len;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &len) != napi_ok) return NULL;
  char *s = malloc(len + 1);
  if (!s) return NULL;
  if (napi_get_value_string_utf8(env, value, s, len + 1, &len) != napi_ok || strlen(s) != len) {
    free(s);
    return NULL;
  }
  return s;
}

static bool export_function(napi_env env, napi_value exports, const char *name, napi_callback cb) {
  napi_value fn;
  return napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, NULL, &fn) == napi_ok && napi_set_named_property(env, exports, name, fn) == napi_ok;
}

NAPI_MODULE_INIT() {
  if (!export_function(env, exports, "spawn", Spawn) || !export_function(env, exports, "statProbe", StatProbe) ||
      !export_function(env, exports, "readFile", ReadFile)) {
    return NULL;
  }
  return exports;
}
