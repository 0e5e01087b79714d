/*
 * posix_spawn(3) for Node, part of the Node-API addon (lib/native/addon.c; docs/design.md, "Starting a
 * run"). Built by scripts/native.mjs with the machine's C compiler against Node's own headers; without
 * it, lib/native/addon.ts says so and the callers spawn through libuv as Node does.
 *
 * spawn(file, argv, envp, cwd, stdio, setsid) -> [pid, gate], or [-errno, -1] when the child could not
 * be started (glibc reports a failed exec too). posix_spawn(3): libuv 1.46 (Node 20) starts every child
 * with fork(), so the kernel copies the caller's page tables, the caller waits until the child's exec
 * has thrown that copy away again, and every page the caller writes afterwards takes a copy-on-write
 * fault; on the small VMs these tools run on (a page fault costs ~13 us there) that was ~5 ms of a
 * start-subagent and slowed its exit as much again. glibc's posix_spawn uses clone(CLONE_VM |
 * CLONE_VFORK): nothing is copied, and the caller waits only for the exec.
 * stdio holds three fds for the child's 0, 1 and 2; -1 is /dev/null; -2 (for 0 only) is the read end
 * of a new pipe whose write end is returned as gate, open and close-on-exec: the child sees end-of-file
 * there once this process closes it or exits. The child starts with signals 1-31 at their default
 * action (Node ignores SIGPIPE and SIGXFSZ) and none blocked, as libuv starts it; glibc sets its own
 * two internal signals (32 and 33) to ignored in every child posix_spawn starts, which glibc, Go and
 * musl programs override when they use them. It runs in its own session when setsid is true, in cwd,
 * with no fd but 0, 1 and 2: not even one the caller inherited without close-on-exec (glibc 2.34+).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "addon.h"

static void free_strings(char **list) {
  if (!list) return;
  for (char **p = list; *p; p++) free(*p);
  free(list);
}

/* A JS array of strings as a NULL-terminated malloc'ed list; NULL when it is anything else. */
static char **c_strings(napi_env env, napi_value array) {
  uint32_t n;
  if (napi_get_array_length(env, array, &n) != napi_ok) return NULL;
  char **list = calloc((size_t)n + 1, sizeof(char *));
  if (!list) return NULL;
  for (uint32_t i = 0; i < n; i++) {
    napi_value item;
    if (napi_get_element(env, array, i, &item) != napi_ok || !(list[i] = c_string(env, item))) {
      free_strings(list);
      return NULL;
    }
  }
  return list;
}

static napi_value number(napi_env env, int32_t n) {
  napi_value v;
  napi_create_int32(env, n, &v);
  return v;
}

static int start(const char *file, char **argv, char **envp, const char *cwd, const int32_t stdio[3], bool new_session, pid_t *pid, int *gate) {
  /* A source fd below 3 would be overwritten by an earlier dup2 onto 0-2: move it out of the way. */
  int moved[3] = {-1, -1, -1};
  int source[3];
  int err = 0;
  *gate = -1;
  for (int i = 0; i < 3; i++) {
    source[i] = stdio[i];
    if (i == 0 && stdio[0] == -2) {
      int ends[2];
      if (pipe2(ends, O_CLOEXEC) == -1) {
        err = errno;
        goto out_moved;
      }
      source[0] = moved[0] = ends[0];
      *gate = ends[1];
    } else if (stdio[i] >= 0 && stdio[i] < 3) {
      if ((moved[i] = fcntl(stdio[i], F_DUPFD_CLOEXEC, 3)) == -1) {
        err = errno;
        goto out_moved;
      }
      source[i] = moved[i];
    }
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  if ((err = posix_spawn_file_actions_init(&actions))) goto out_moved;
  if ((err = posix_spawnattr_init(&attr))) goto out_actions;
  for (int i = 0; i < 3 && !err; i++) {
    err = source[i] >= 0 ? posix_spawn_file_actions_adddup2(&actions, source[i], i)
                         : posix_spawn_file_actions_addopen(&actions, i, "/dev/null", i == 0 ? O_RDONLY : O_RDWR, 0);
  }
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34)
  /* What the caller inherited without close-on-exec (a harness's pipe, say) must not live on in a
   * daemon: whoever waits for that pipe's end would wait for the whole run. libuv passes such fds on. */
  if (!err) err = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
  if (!err) err = posix_spawn_file_actions_addchdir_np(&actions, cwd);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  if (!err) err = posix_spawnattr_setsigdefault(&attr, &all);
  if (!err) err = posix_spawnattr_setsigmask(&attr, &none);
  if (!err) err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | (new_session ? POSIX_SPAWN_SETSID : 0));
  if (!err) err = posix_spawn(pid, file, &actions, &attr, argv, envp);
  posix_spawnattr_destroy(&attr);
out_actions:
  posix_spawn_file_actions_destroy(&actions);
out_moved:
  for (int i = 0; i < 3; i++)
    if (moved[i] != -1) close(moved[i]);
  if (err && *gate != -1) {
    close(*gate);
    *gate = -1;
  }
  return err;
}

napi_value Spawn(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value args[6];
  if (napi_get_cb_info(env, info, &argc, args, NULL, NULL) != napi_ok || argc != 6) {
    napi_throw_type_error(env, NULL, "spawn(file, argv, envp, cwd, stdio, setsid)");
    return NULL;
  }
  char *file = c_string(env, args[0]);
  char **argv = c_strings(env, args[1]);
  char **envp = c_strings(env, args[2]);
  char *cwd = c_string(env, args[3]);
  int32_t stdio[3];
  bool ok = file && argv && argv[0] && envp && cwd;
  for (uint32_t i = 0; i < 3 && ok; i++) {
    napi_value fd;
    ok = napi_get_element(env, args[4], i, &fd) == napi_ok && napi_get_value_int32(env, fd, &stdio[i]) == napi_ok;
  }
  bool new_session = false;
  ok = ok && napi_get_value_bool(env, args[5], &new_session) == napi_ok;
  napi_value result = NULL;
  if (!ok) {
    napi_throw_type_error(env, NULL, "spawn(file: string, argv: string[], envp: string[], cwd: string, stdio: [fd, fd, fd], setsid: boolean)");
  } else {
    pid_t pid = 0;
    int gate = -1;
    int err = start(file, argv, envp, cwd, stdio, new_session, &pid, &gate);
    napi_create_array_with_length(env, 2, &result);
    napi_set_element(env, result, 0, number(env, err ? -err : pid));
    napi_set_element(env, result, 1, number(env, gate));
  }
  free(file);
  free_strings(argv);
  free_strings(envp);
  free(cwd);
  return result;
}
