/* Naming the plugin that crashed.
 *
 * A plugin that dereferences NULL in compile or run kills the process, and
 * without a word the user cannot tell whom to blame. So, once a plugin has
 * been loaded, fatal signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) go
 * through a handler that, when the signal arrives inside a plugin call on
 * that thread (the per-thread record kept by fbx_host_set_current /
 * fbx_host_set_stage), writes one line:
 *
 *   fusebox: fuser plugin 'crash' (/path/libcrash.so) crashed with SIGSEGV in run of group %c (aten::relu)
 *
 * and then restores the action that was there before (the default, or a
 * sanitizer's) and lets the signal happen again (a fault by returning to the
 * faulting instruction, a sent signal by raising it), so the process dies as
 * it would have (exit status 134/139, core dump, sanitizer report). Only
 * async-signal-safe calls: write(2) of strings that exist already,
 * sigaction, raise.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "host/hostimpl.h"

static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NSIGS (int)(sizeof sigs / sizeof sigs[0])
static struct sigaction old_actions[NSIGS];

static const char *sig_name(int sig) {
  switch (sig) {
  case SIGSEGV: return "SIGSEGV";
  case SIGBUS: return "SIGBUS";
  case SIGFPE: return "SIGFPE";
  case SIGILL: return "SIGILL";
  case SIGABRT: return "SIGABRT";
  default: return "a fatal signal";
  }
}

static void put(const char *s) {
  size_t n = 0;
  while (s[n]) n++;
  while (n) {
    ssize_t w = write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= (size_t)w;
  }
}

/* What the process is doing, set by tools (plugin-check names its test). */
static const char *volatile crash_context;

static void on_fatal(int sig, siginfo_t *info, void *uctx) {
  (void)uctx;
  const char *name, *path, *stage, *what;
  const char *ctx = crash_context;
  if (ctx) {
    put("fusebox: crashed with ");
    put(sig_name(sig));
    put(" during ");
    put(ctx);
    put("\n");
  }
  if (fbx_host_current_call(&name, &path, &stage, &what)) {
    put("fusebox: fuser plugin '");
    put(name);
    put("' (");
    put(path);
    put(") crashed with ");
    put(sig_name(sig));
    put(" in ");
    put(stage);
    put(" of ");
    put(what);
    put("\n");
  }
  for (int i = 0; i < NSIGS; i++)
    if (sigs[i] == sig) sigaction(sig, &old_actions[i], NULL);
  /* A fault (a bad load, a division by zero) happens again when the
   * handler returns, now under the previous action, which then sees the
   * real fault (a sanitizer reports it properly); a signal that was sent
   * (abort, kill) is sent again. */
  if (!info || info->si_code <= 0) raise(sig);
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fatal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO | SA_NODEFER; /* the re-raise inside the handler must be delivered */
  for (int i = 0; i < NSIGS; i++) {
    struct sigaction cur;
    if (sigaction(sigs[i], NULL, &cur) != 0) continue;
    /* A program that ignores the signal keeps ignoring it. */
    if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN) continue;
    old_actions[i] = cur;
    sigaction(sigs[i], &sa, NULL);
  }
}

void fbx_host_crash_note_install(void) { pthread_once(&once, install); }

void fbx_host_set_crash_context(const char *what) {
  fbx_host_crash_note_install();
  crash_context = what;
}
