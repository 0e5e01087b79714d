/* The Node-API addon's shared declarations (lib/native/addon.c registers what the other files define). */
#ifndef SUBAGENTS_ADDON_H
#define SUBAGENTS_ADDON_H
#include <node_api.h>

/* A JS string as a malloc'ed C string; NULL when it is not a string (or holds a NUL byte). */
char *c_string(napi_env env, napi_value value);

/* lib/native/spawn.c */
napi_value Spawn(napi_env env, napi_callback_info info);
/* lib/native/read-file.c */
napi_value ReadFile(napi_env env, napi_callback_info info);
/* lib/native/stat-probe.c */
napi_value StatProbe(napi_env env, napi_callback_info info);
#endif
