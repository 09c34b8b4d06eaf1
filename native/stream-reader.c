// spectune's native stream reader: one thread owns every benchmark socket's reads (epoll), takes the kernel's
// receive timestamp of each read (SO_TIMESTAMPNS) and hands the bytes to JavaScript in batches.
// Why: in Node every socket read is a syscall plus a C++->JS callback (9-16 us on a VM); at 1024 streams that
// saturates the event loop and its delays become the measured latency. Here a read costs one recvmsg, the JS
// side parses whole batches, and the timestamp is when the bytes reached this host, not when JS got to them.
// Plain C against Node-API only, built by scripts/build-native.sh; spectune falls back to JS without it.
#define _GNU_SOURCE
#include <node_api.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "clock-ms.h"

// Record kinds, as the JS side reads them (native-transport.ts).
enum { EV_DATA = 1, EV_CONNECTED = 2, EV_CLOSED = 3 };
// Record header: u32 conn id, u32 kind, u32 length (data) or errno (closed), u32 stamp source, f64 time (ms).
#define HDR 24
#define READ_CHUNK 65536
#define MAX_EVENTS 1024
#define WAKE_ID UINT32_MAX
// A round that read at least ROUND_MIN_READS sockets is followed by a wait that makes the round last ROUND_NS,
// so that one wake-up serves many sockets. Kernel stamps make the wait invisible in the figures; rounds without
// them do not wait, nor do rounds of a single stream (a wait there only adds a wake-up), nor rounds that already
// took ROUND_NS (a socket must be read again before its next token arrives, or both share one stamp).
#define ROUND_NS 1000000L
#define ROUND_MIN_READS 2

typedef struct {
  int fd;            // -1 once closed (only the reader thread closes)
  int connected;
  char *pending;     // request bytes not yet written
  size_t pending_len, pending_off;
} conn_t;

typedef struct {
  char *data;
  size_t len, cap;
} buf_t;

typedef struct {
  pthread_mutex_t mu;
  pthread_t thread;
  int thread_started;
  int epfd, evfd;
  int stopping, destroyed;
  conn_t **conns;
  uint32_t nconns, capconns;
  uint32_t *closeq;
  size_t ncloseq, capcloseq;
  buf_t cur;     // filled by the reader thread without the lock
  buf_t ready;   // handed over under the lock, taken by JS
  int notified;
  napi_threadsafe_function tsfn;
  struct sockaddr_storage addr;
  socklen_t addrlen;
  uint64_t kernel_stamps, clock_stamps;
  double thread_cpu_ms;  // the reader thread's CPU time, read when it stops
  int boosted;           // 2: SCHED_FIFO, 1: nice -20, 0: as started (see reader_main)
} reader_t;

static int buf_reserve(buf_t *b, size_t extra) {
  if (b->len + extra <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 256 * 1024;
  while (cap < b->len + extra) cap *= 2;
  char *d = realloc(b->data, cap);
  if (!d) return -1;
  b->data = d;
  b->cap = cap;
  return 0;
}

static void put_header(char *p, uint32_t id, uint32_t kind, uint32_t len, uint32_t source, double t) {
  memcpy(p, &id, 4);
  memcpy(p + 4, &kind, 4);
  memcpy(p + 8, &len, 4);
  memcpy(p + 12, &source, 4);
  memcpy(p + 16, &t, 8);
}

static void emit(reader_t *r, uint32_t id, uint32_t kind, uint32_t code, double t) {
  if (buf_reserve(&r->cur, HDR) != 0) return;
  put_header(r->cur.data + r->cur.len, id, kind, code, 0, t);
  r->cur.len += HDR;
}

// Close a connection from the reader thread (the lock is held): no later event can reach a reused fd.
static void close_conn(reader_t *r, uint32_t id, conn_t *c, int err, int report) {
  if (c->fd < 0) return;
  epoll_ctl(r->epfd, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  c->fd = -1;
  free(c->pending);
  c->pending = NULL;
  c->pending_len = c->pending_off = 0;
  if (report) emit(r, id, EV_CLOSED, (uint32_t)err, mono_ms());
}

// Write what is pending; 0 when done or waiting for EPOLLOUT, an errno on failure.
static int flush_pending(reader_t *r, uint32_t id, conn_t *c) {
  while (c->pending_off < c->pending_len) {
    ssize_t n = send(c->fd, c->pending + c->pending_off, c->pending_len - c->pending_off, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.u32 = id };
        epoll_ctl(r->epfd, EPOLL_CTL_MOD, c->fd, &ev);
        return 0;
      }
      if (errno == EINTR) continue;
      return errno;
    }
    c->pending_off += (size_t)n;
  }
  free(c->pending);
  c->pending = NULL;
  c->pending_len = c->pending_off = 0;
  struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.u32 = id };
  epoll_ctl(r->epfd, EPOLL_CTL_MOD, c->fd, &ev);
  return 0;
}

// One readable socket: a single recvmsg into the batch, stamped with the kernel's receive time.
static int read_conn(reader_t *r, uint32_t id, conn_t *c, double offset_ms) {
  if (buf_reserve(&r->cur, HDR + READ_CHUNK + 8) != 0) return 0;
  char *hdr = r->cur.data + r->cur.len;
  char control[256];
  struct iovec iov = { .iov_base = hdr + HDR, .iov_len = READ_CHUNK };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control };
  ssize_t n = recvmsg(c->fd, &msg, MSG_DONTWAIT);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
    close_conn(r, id, c, errno, 1);
    return 0;
  }
  if (n == 0) {
    close_conn(r, id, c, 0, 1);
    return 0;
  }
  double t = -1;
  for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
      struct timespec ts;
      memcpy(&ts, CMSG_DATA(cm), sizeof ts);
      if (ts.tv_sec != 0) t = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 - offset_ms;
    }
  }
  uint32_t source = 1;
  if (t < 0) {
    t = mono_ms();
    source = 0;
    r->clock_stamps++;
  } else {
    r->kernel_stamps++;
  }
  put_header(hdr, id, EV_DATA, (uint32_t)n, source, t);
  r->cur.len += HDR + (((size_t)n + 7) & ~(size_t)7);
  return source == 1 ? 1 : -1;
}

// Returns 1 for a kernel-stamped read, -1 for a clock-stamped one, 0 for anything else.
static int handle_event(reader_t *r, struct epoll_event *ev, double offset_ms) {
  uint32_t id = ev->data.u32;
  if (id >= r->nconns) return 0;
  conn_t *c = r->conns[id];
  if (!c || c->fd < 0) return 0;
  if (!c->connected) {
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) {
      close_conn(r, id, c, err, 1);
      return 0;
    }
    if (!(ev->events & EPOLLOUT)) return 0;
    c->connected = 1;
    emit(r, id, EV_CONNECTED, 0, mono_ms());
  }
  if ((ev->events & EPOLLOUT) && c->pending) {
    int err = flush_pending(r, id, c);
    if (err) {
      close_conn(r, id, c, err, 1);
      return 0;
    }
  } else if ((ev->events & EPOLLOUT) && !c->pending) {
    struct epoll_event mod = { .events = EPOLLIN | EPOLLRDHUP, .data.u32 = id };
    epoll_ctl(r->epfd, EPOLL_CTL_MOD, c->fd, &mod);
  }
  if (ev->events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) return read_conn(r, id, c, offset_ms);
  return 0;
}

// Move this round's records to the hand-over buffer and wake JS once per batch.
static void hand_over(reader_t *r) {
  if (r->cur.len == 0) return;
  pthread_mutex_lock(&r->mu);
  if (r->ready.len == 0) {
    buf_t t = r->ready;
    r->ready = r->cur;
    r->cur = t;
  } else if (buf_reserve(&r->ready, r->cur.len) == 0) {
    memcpy(r->ready.data + r->ready.len, r->cur.data, r->cur.len);
    r->ready.len += r->cur.len;
  }
  r->cur.len = 0;
  int notify = !r->notified;
  r->notified = 1;
  pthread_mutex_unlock(&r->mu);
  if (notify) napi_call_threadsafe_function(r->tsfn, NULL, napi_tsfn_nonblocking);
}

static void *reader_main(void *arg) {
  reader_t *r = arg;
  // The thread uses little CPU but must not wait behind the engine or the JS thread for its turn: a socket left
  // unread while a second token arrives merges both under one (the later) receive stamp. Best effort, when allowed
  // (root or CAP_SYS_NICE): SCHED_FIFO priority 1 (it blocks in epoll_wait whenever no socket has data and does one
  // recvmsg per ready socket, so its CPU follows the data arriving; the kernel's real-time throttling caps the rest),
  // else nice -20, else unchanged; SPECTUNE_READER_RT=0 skips real time; a real-time process is left as it is.
  int policy = sched_getscheduler(0);
  if (policy == SCHED_OTHER || policy == SCHED_BATCH) {
    struct sched_param sp = { .sched_priority = 1 };
    const char *rt = getenv("SPECTUNE_READER_RT");
    if (!(rt && strcmp(rt, "0") == 0) && pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0) r->boosted = 2;
    else if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -20) == 0) r->boosted = 1;
  }
  struct epoll_event evs[MAX_EVENTS];
  for (;;) {
    int n = epoll_wait(r->epfd, evs, MAX_EVENTS, -1);
    if (n < 0 && errno != EINTR) break;
    // Kernel stamps are CLOCK_REALTIME; JS clocks are CLOCK_MONOTONIC. The offset is re-read every round.
    double woke_ms = mono_ms();
    double offset_ms = real_ms() - woke_ms;
    pthread_mutex_lock(&r->mu);
    if (r->stopping) {
      pthread_mutex_unlock(&r->mu);
      break;
    }
    int kernel = 0, clock = 0;
    for (int i = 0; i < n; i++) {
      if (evs[i].data.u32 == WAKE_ID) {
        uint64_t v;
        if (read(r->evfd, &v, sizeof v) < 0) { /* nothing to do */ }
        continue;
      }
      int k = handle_event(r, &evs[i], offset_ms);
      kernel += k > 0;
      clock += k < 0;
    }
    for (size_t i = 0; i < r->ncloseq; i++) {
      uint32_t id = r->closeq[i];
      if (id < r->nconns && r->conns[id]) close_conn(r, id, r->conns[id], 0, 0);
    }
    r->ncloseq = 0;
    pthread_mutex_unlock(&r->mu);
    hand_over(r);
    long left_ns = ROUND_NS - (long)((mono_ms() - woke_ms) * 1e6);
    if (kernel >= ROUND_MIN_READS && clock == 0 && left_ns > 0) {
      struct timespec wait = { 0, left_ns };
      nanosleep(&wait, NULL);
    }
  }
  struct rusage ru;
  if (getrusage(RUSAGE_THREAD, &ru) == 0) {
    r->thread_cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
  }
  return NULL;
}

// ---- Node-API surface ---------------------------------------------------------------------------------------

static void call_js(napi_env env, napi_value cb, void *context, void *data) {
  (void)data;
  reader_t *r = context;
  if (!env) return;
  napi_value buf, undef;
  pthread_mutex_lock(&r->mu);
  napi_status st = napi_create_buffer_copy(env, r->ready.len, r->ready.data ? r->ready.data : "", NULL, &buf);
  r->ready.len = 0;
  r->notified = 0;
  pthread_mutex_unlock(&r->mu);
  if (st != napi_ok) return;
  napi_get_undefined(env, &undef);
  napi_call_function(env, undef, cb, 1, &buf, NULL);
}

static void stop_reader(reader_t *r) {
  if (r->destroyed) return;
  r->destroyed = 1;
  pthread_mutex_lock(&r->mu);
  r->stopping = 1;
  pthread_mutex_unlock(&r->mu);
  uint64_t one = 1;
  if (write(r->evfd, &one, sizeof one) < 0) { /* the thread also stops on the next event */ }
  if (r->thread_started) pthread_join(r->thread, NULL);
  for (uint32_t i = 0; i < r->nconns; i++) {
    if (!r->conns[i]) continue;
    if (r->conns[i]->fd >= 0) close(r->conns[i]->fd);
    free(r->conns[i]->pending);
    free(r->conns[i]);
  }
  free(r->conns);
  free(r->closeq);
  close(r->epfd);
  close(r->evfd);
  napi_release_threadsafe_function(r->tsfn, napi_tsfn_abort);
}

static void finalize_reader(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  reader_t *r = data;
  stop_reader(r);
  free(r->cur.data);
  free(r->ready.data);
  pthread_mutex_destroy(&r->mu);
  free(r);
}

static napi_value throw_errno(napi_env env, const char *what, int err) {
  char msg[256];
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
  napi_throw_error(env, NULL, msg);
  return NULL;
}

static reader_t *get_reader(napi_env env, napi_value v) {
  void *p = NULL;
  if (napi_get_value_external(env, v, &p) != napi_ok || !p) {
    napi_throw_type_error(env, NULL, "expected a stream reader");
    return NULL;
  }
  reader_t *r = p;
  if (r->destroyed) {
    napi_throw_error(env, NULL, "stream reader is closed");
    return NULL;
  }
  return r;
}

// Unpack a call's first n arguments, the first being the reader; NULL (a JS exception pending) when it is not one.
static reader_t *reader_args(napi_env env, napi_callback_info info, size_t n, napi_value *argv) {
  size_t argc = n;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  return get_reader(env, argv[0]);
}

// create(onBatch): start a reader thread; onBatch(buffer) receives the records.
static napi_value js_create(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], name, ext;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  reader_t *r = calloc(1, sizeof *r);
  if (!r) return throw_errno(env, "calloc", ENOMEM);
  pthread_mutex_init(&r->mu, NULL);
  r->epfd = epoll_create1(EPOLL_CLOEXEC);
  r->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (r->epfd < 0 || r->evfd < 0) return throw_errno(env, "epoll/eventfd", errno);
  struct epoll_event ev = { .events = EPOLLIN, .data.u32 = WAKE_ID };
  epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->evfd, &ev);
  napi_create_string_utf8(env, "spectune-stream-reader", NAPI_AUTO_LENGTH, &name);
  if (napi_create_threadsafe_function(env, argv[0], NULL, name, 0, 1, NULL, NULL, r, call_js, &r->tsfn) != napi_ok) {
    napi_throw_error(env, NULL, "cannot create the stream reader's callback");
    return NULL;
  }
  if (pthread_create(&r->thread, NULL, reader_main, r) != 0) return throw_errno(env, "pthread_create", errno);
  r->thread_started = 1;
  napi_create_external(env, r, finalize_reader, NULL, &ext);
  return ext;
}

// Whether a TCP connection to `ai` succeeds within 3 s (a name with several addresses, e.g. localhost on ::1
// and 127.0.0.1, may answer on only one of them; node:net tries them in turn, so does this).
static int probe_addr(struct addrinfo *ai) {
  int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  int ok = 0;
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
    ok = 1;
  } else if (errno == EINPROGRESS) {
    struct pollfd p = { .fd = fd, .events = POLLOUT };
    int err = 0;
    socklen_t len = sizeof err;
    ok = poll(&p, 1, 3000) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
  }
  close(fd);
  return ok;
}

// resolve(reader, host, port): look the server's address up once (getaddrinfo); with several addresses, the
// first that accepts a connection.
static napi_value js_resolve(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  reader_t *r = reader_args(env, info, 3, argv);
  if (!r) return NULL;
  char host[256], port[16];
  size_t len;
  napi_get_value_string_utf8(env, argv[1], host, sizeof host, &len);
  napi_get_value_string_utf8(env, argv[2], port, sizeof port, &len);
  struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
  int rc = getaddrinfo(host, port, &hints, &res);
  if (rc != 0 || !res) {
    char msg[320];
    snprintf(msg, sizeof msg, "getaddrinfo %s: %s", host, gai_strerror(rc));
    napi_throw_error(env, "ENOTFOUND", msg);
    return NULL;
  }
  struct addrinfo *pick = res;
  if (res->ai_next) {
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
      if (probe_addr(ai)) {
        pick = ai;
        break;
      }
    }
  }
  memcpy(&r->addr, pick->ai_addr, pick->ai_addrlen);
  r->addrlen = pick->ai_addrlen;
  freeaddrinfo(res);
  return NULL;
}

// open(reader): a non-blocking connect; returns the connection id. EV_CONNECTED or EV_CLOSED follows.
static napi_value js_open(napi_env env, napi_callback_info info) {
  napi_value argv[1], out;
  reader_t *r = reader_args(env, info, 1, argv);
  if (!r) return NULL;
  if (r->addrlen == 0) {
    napi_throw_error(env, NULL, "resolve() the server first");
    return NULL;
  }
  int fd = socket(r->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, "socket", errno);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
  if (connect(fd, (struct sockaddr *)&r->addr, r->addrlen) != 0 && errno != EINPROGRESS) {
    int err = errno;
    close(fd);
    return throw_errno(env, "connect", err);
  }
  conn_t *c = calloc(1, sizeof *c);
  if (!c) {
    close(fd);
    return throw_errno(env, "calloc", ENOMEM);
  }
  c->fd = fd;
  pthread_mutex_lock(&r->mu);
  if (r->nconns == r->capconns) {
    uint32_t cap = r->capconns ? r->capconns * 2 : 1024;
    conn_t **n = realloc(r->conns, cap * sizeof *n);
    if (!n) {
      pthread_mutex_unlock(&r->mu);
      close(fd);
      free(c);
      return throw_errno(env, "realloc", ENOMEM);
    }
    r->conns = n;
    r->capconns = cap;
  }
  uint32_t id = r->nconns++;
  r->conns[id] = c;
  struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.u32 = id };
  epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev);
  pthread_mutex_unlock(&r->mu);
  napi_create_uint32(env, id, &out);
  return out;
}

// write(reader, id, buffer): send now when connected and nothing is queued, else queue for the reader thread.
static napi_value js_write(napi_env env, napi_callback_info info) {
  napi_value argv[3], out;
  reader_t *r = reader_args(env, info, 3, argv);
  if (!r) return NULL;
  uint32_t id;
  void *data;
  size_t len;
  napi_get_value_uint32(env, argv[1], &id);
  if (napi_get_buffer_info(env, argv[2], &data, &len) != napi_ok) {
    napi_throw_type_error(env, NULL, "write() takes a Buffer");
    return NULL;
  }
  int err = 0;
  pthread_mutex_lock(&r->mu);
  conn_t *c = id < r->nconns ? r->conns[id] : NULL;
  if (!c || c->fd < 0) {
    err = EPIPE;
  } else {
    size_t off = 0;
    if (c->connected && !c->pending) {
      while (off < len) {
        ssize_t n = send(c->fd, (char *)data + off, len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) {
          if (errno == EINTR) continue;
          if (errno != EAGAIN && errno != EWOULDBLOCK) err = errno;
          break;
        }
        off += (size_t)n;
      }
    }
    if (!err && off < len) {
      char *p = realloc(c->pending, c->pending_len + (len - off));
      if (!p) {
        err = ENOMEM;
      } else {
        memcpy(p + c->pending_len, (char *)data + off, len - off);
        c->pending = p;
        c->pending_len += len - off;
        struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.u32 = id };
        epoll_ctl(r->epfd, EPOLL_CTL_MOD, c->fd, &ev);
      }
    }
  }
  pthread_mutex_unlock(&r->mu);
  napi_create_int32(env, err, &out);
  return out;
}

// close(reader, id): the reader thread closes the socket on its next round; no record follows.
static napi_value js_close(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  reader_t *r = reader_args(env, info, 2, argv);
  if (!r) return NULL;
  uint32_t id;
  napi_get_value_uint32(env, argv[1], &id);
  pthread_mutex_lock(&r->mu);
  if (r->ncloseq == r->capcloseq) {
    size_t cap = r->capcloseq ? r->capcloseq * 2 : 64;
    uint32_t *q = realloc(r->closeq, cap * sizeof *q);
    if (q) {
      r->closeq = q;
      r->capcloseq = cap;
    }
  }
  if (r->ncloseq < r->capcloseq) r->closeq[r->ncloseq++] = id;
  pthread_mutex_unlock(&r->mu);
  uint64_t one = 1;
  if (write(r->evfd, &one, sizeof one) < 0) { /* the eventfd counter cannot overflow here */ }
  return NULL;
}

// destroy(reader): stop the thread and close every socket; returns {kernelStamps, clockStamps, threadCpuMs, priority}.
static napi_value js_destroy(napi_env env, napi_callback_info info) {
  napi_value argv[1], out, k, c, cpu, boosted;
  reader_t *r = reader_args(env, info, 1, argv);
  if (!r) return NULL;
  stop_reader(r);
  napi_create_object(env, &out);
  napi_create_double(env, (double)r->kernel_stamps, &k);
  napi_create_double(env, (double)r->clock_stamps, &c);
  napi_set_named_property(env, out, "kernelStamps", k);
  napi_set_named_property(env, out, "clockStamps", c);
  napi_create_double(env, r->thread_cpu_ms, &cpu);
  napi_set_named_property(env, out, "threadCpuMs", cpu);
  napi_create_string_utf8(env, r->boosted == 2 ? "fifo" : r->boosted == 1 ? "nice-20" : "default", NAPI_AUTO_LENGTH, &boosted);
  napi_set_named_property(env, out, "priority", boosted);
  return out;
}

// ref(reader, on): keep the process alive while requests are in flight, let it exit when idle.
static napi_value js_ref(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  bool on = false;
  reader_t *r = reader_args(env, info, 2, argv);
  if (!r) return NULL;
  napi_get_value_bool(env, argv[1], &on);
  if (on) napi_ref_threadsafe_function(env, r->tsfn);
  else napi_unref_threadsafe_function(env, r->tsfn);
  return NULL;
}

// monotonicMs(): the reader's clock (CLOCK_MONOTONIC, the clock behind performance.now()).
static napi_value js_monotonic(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  napi_create_double(env, mono_ms(), &out);
  return out;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
    { "create", NULL, js_create, NULL, NULL, NULL, napi_default, NULL },
    { "resolve", NULL, js_resolve, NULL, NULL, NULL, napi_default, NULL },
    { "open", NULL, js_open, NULL, NULL, NULL, napi_default, NULL },
    { "write", NULL, js_write, NULL, NULL, NULL, napi_default, NULL },
    { "close", NULL, js_close, NULL, NULL, NULL, napi_default, NULL },
    { "destroy", NULL, js_destroy, NULL, NULL, NULL, napi_default, NULL },
    { "ref", NULL, js_ref, NULL, NULL, NULL, napi_default, NULL },
    { "monotonicMs", NULL, js_monotonic, NULL, NULL, NULL, napi_default, NULL },
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
