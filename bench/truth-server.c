// Truth server of bench/accuracy.mjs: streams SGLang-shaped chat chunks on an exact schedule (first token TTFT ms
// after it reads a request, then one every ITL ms, against absolute deadlines) and records, per request, when the
// request reached this host (the kernel's receive stamp), when the server read it, and when it handed each token
// to the kernel. Written in C so that at 1024 streams the server stays on schedule on 2 cores, and so that the
// truth of TTFT starts when the request arrived, not when a busy server got round to reading it.
// usage: truth-server TTFT_MS ITL_MS  -> prints its port; "take" on stdin prints the records as one JSON line.
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "../native/clock-ms.h"

#define STDIN_ID 0xFFFFFFF0u
#define LISTEN_ID 0xFFFFFFF1u
#define TIMER_ID 0xFFFFFFF2u

typedef struct {
  char id[64];
  double recv_kernel, recv_user;  // ms, CLOCK_MONOTONIC
  double *sends, *returns;        // when write() was called for each token, and when it returned
  int n, k;
} record_t;

typedef struct {
  int fd;
  char *in;
  size_t in_len, in_cap;
  double last_kernel;  // receive stamp of the latest read
  char *out;           // bytes the socket did not take yet
  size_t out_len;
} conn_t;

typedef struct {
  double due;
  int conn;
  int rec;
} stream_t;

static conn_t *conns;
static int nconns, capconns;
static record_t *recs;
static int nrecs, caprecs;
static stream_t *heap;
static int nheap, capheap;
static int epfd, tfd;
static double ttft_ms, itl_ms;
static char frame[2048], head[1024];
static size_t frame_len, head_len;

static void *grow(void *p, int *cap, int need, size_t size) {
  if (need <= *cap) return p;
  int c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  p = realloc(p, (size_t)c * size);
  if (!p) { perror("realloc"); exit(1); }
  *cap = c;
  return p;
}

// Write, keeping what the socket does not take for EPOLLOUT.
static void send_bytes(int ci, const char *b, size_t len) {
  conn_t *c = &conns[ci];
  if (c->fd < 0) return;
  size_t off = 0;
  if (c->out_len == 0) {
    while (off < len) {
      ssize_t n = send(c->fd, b + off, len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN) { close(c->fd); c->fd = -1; return; }
        break;
      }
      off += (size_t)n;
    }
  }
  if (off < len) {
    c->out = realloc(c->out, c->out_len + len - off);
    memcpy(c->out + c->out_len, b + off, len - off);
    c->out_len += len - off;
    struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.u32 = (uint32_t)ci };
    epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
  }
}

static void heap_push(stream_t s) {
  heap = grow(heap, &capheap, nheap + 1, sizeof *heap);
  int i = nheap++;
  heap[i] = s;
  while (i > 0) {
    int p = (i - 1) / 2;
    if (heap[p].due <= heap[i].due) break;
    stream_t t = heap[p]; heap[p] = heap[i]; heap[i] = t;
    i = p;
  }
}

static stream_t heap_pop(void) {
  stream_t top = heap[0];
  heap[0] = heap[--nheap];
  int i = 0;
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < nheap && heap[l].due < heap[m].due) m = l;
    if (r < nheap && heap[r].due < heap[m].due) m = r;
    if (m == i) break;
    stream_t t = heap[m]; heap[m] = heap[i]; heap[i] = t;
    i = m;
  }
  return top;
}

static void arm_timer(void) {
  struct itimerspec its = { 0 };
  if (nheap > 0) {
    double due = heap[0].due;
    if (due <= 0) due = 0.001;
    its.it_value.tv_sec = (time_t)(due / 1e3);
    its.it_value.tv_nsec = (long)((due - its.it_value.tv_sec * 1e3) * 1e6);
    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) its.it_value.tv_nsec = 1;
  }
  timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void chunk(char *dst, size_t *len, const char *text) {
  *len = (size_t)sprintf(dst, "%zx\r\n%s\r\n", strlen(text), text);
}

// A whole request is in: note its arrival, answer the head, schedule its tokens.
static void start_request(int ci, const char *headers, size_t hlen, const char *body, size_t blen) {
  recs = grow(recs, &caprecs, nrecs + 1, sizeof *recs);
  record_t *r = &recs[nrecs];
  memset(r, 0, sizeof *r);
  r->recv_user = mono_ms();
  r->recv_kernel = conns[ci].last_kernel > 0 ? conns[ci].last_kernel : r->recv_user;
  strcpy(r->id, "?");
  const char *h = NULL;
  for (const char *p = headers; p + 13 <= headers + hlen; p++) {
    if ((p == headers || p[-1] == '\n') && strncasecmp(p, "x-request-id:", 13) == 0) { h = p; break; }
  }
  if (h) {
    h += 13;
    while (*h == ' ') h++;
    size_t i = 0;
    while (i < sizeof r->id - 1 && h[i] != '\r' && h[i] != '\n') { r->id[i] = h[i]; i++; }
    r->id[i] = 0;
  }
  r->n = 16;
  const char *m = memmem(body, blen, "\"max_tokens\":", 13);
  if (m) r->n = atoi(m + 13);
  if (r->n < 1) r->n = 1;
  r->sends = calloc((size_t)r->n, sizeof(double));
  r->returns = calloc((size_t)r->n, sizeof(double));
  send_bytes(ci, head, head_len);
  heap_push((stream_t){ .due = r->recv_user + ttft_ms, .conn = ci, .rec = nrecs });
  nrecs++;
}

static void parse_requests(int ci) {
  conn_t *c = &conns[ci];
  for (;;) {
    char *end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
    if (!end) return;
    size_t hlen = (size_t)(end - c->in);
    size_t clen = 0;
    for (char *p = c->in; p < end; p++) {
      if ((p == c->in || p[-1] == '\n') && strncasecmp(p, "content-length:", 15) == 0) clen = (size_t)atol(p + 15);
    }
    size_t total = hlen + 4 + clen;
    if (c->in_len < total) return;
    start_request(ci, c->in, hlen, end + 4, clen);
    memmove(c->in, c->in + total, c->in_len - total);
    c->in_len -= total;
  }
}

static void read_conn(int ci) {
  conn_t *c = &conns[ci];
  for (;;) {
    if (c->in_cap - c->in_len < 65536) {
      c->in_cap = c->in_cap ? c->in_cap * 2 : 131072;
      c->in = realloc(c->in, c->in_cap);
    }
    char control[256];
    struct iovec iov = { .iov_base = c->in + c->in_len, .iov_len = c->in_cap - c->in_len };
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control };
    ssize_t n = recvmsg(c->fd, &msg, MSG_DONTWAIT);
    if (n <= 0) {
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
      epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
      close(c->fd);
      c->fd = -1;
      return;
    }
    double offset = real_ms() - mono_ms();
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
      if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
        struct timespec ts;
        memcpy(&ts, CMSG_DATA(cm), sizeof ts);
        if (ts.tv_sec) c->last_kernel = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 - offset;
      }
    }
    c->in_len += (size_t)n;
  }
  parse_requests(ci);
}

static void accept_all(int lfd) {
  for (;;) {
    int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
    // No pacing: with BBR (this VM's default) the kernel paces small writes and holds tokens back for up to
    // ~100 ms at 1024 streams, so write() would no longer be when a token left. Reno is always built in.
    if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "cubic", 5) != 0) setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "reno", 4);
    conns = grow(conns, &capconns, nconns + 1, sizeof *conns);
    memset(&conns[nconns], 0, sizeof *conns);
    conns[nconns].fd = fd;
    struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)nconns };
    epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
    nconns++;
  }
}

// Send what is due at the start of this pass only, so a server that falls behind still reads new requests.
static void pump(void) {
  double now = mono_ms();
  while (nheap > 0 && heap[0].due <= now) {
    stream_t s = heap_pop();
    record_t *r = &recs[s.rec];
    r->sends[r->k] = mono_ms();
    send_bytes(s.conn, frame, frame_len);
    r->returns[r->k] = mono_ms();
    r->k++;
    if (r->k < r->n) {
      s.due += itl_ms;
      heap_push(s);
    } else {
      char text[256], tail[512];
      size_t len;
      snprintf(text, sizeof text, "data: {\"id\":\"x\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n", r->n, 9 + r->n);
      chunk(tail, &len, text);
      memcpy(tail + len, "0\r\n\r\n", 5);
      send_bytes(s.conn, tail, len + 5);
    }
  }
  arm_timer();
}

static void print_records(void) {
  printf("{\"records\":[");
  for (int i = 0; i < nrecs; i++) {
    record_t *r = &recs[i];
    printf("%s{\"id\":\"%s\",\"recvKernel\":%.4f,\"recv\":%.4f,\"sends\":[", i ? "," : "", r->id, r->recv_kernel, r->recv_user);
    for (int k = 0; k < r->k; k++) printf("%s%.4f", k ? "," : "", r->sends[k]);
    printf("],\"returns\":[");
    for (int k = 0; k < r->k; k++) printf("%s%.4f", k ? "," : "", r->returns[k]);
    printf("]}");
    free(r->sends);
    free(r->returns);
  }
  printf("]}\n");
  fflush(stdout);
  nrecs = 0;
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: truth-server TTFT_MS ITL_MS\n"); return 2; }
  ttft_ms = atof(argv[1]);
  itl_ms = atof(argv[2]);
  char text[1024];
  snprintf(text, sizeof text, "data: %s\n\n", "{\"id\":\"chatcmpl-0123456789abcdef\",\"object\":\"chat.completion.chunk\",\"created\":1732900000,\"model\":\"accuracy\",\"choices\":[{\"index\":0,\"delta\":{\"role\":null,\"content\":\" tok\",\"reasoning_content\":null,\"tool_calls\":null},\"logprobs\":null,\"finish_reason\":null,\"matched_stop\":null}],\"usage\":null}");
  chunk(frame, &frame_len, text);
  char role[512];
  size_t role_len;
  chunk(role, &role_len, "data: {\"id\":\"chatcmpl-0\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n");
  head_len = (size_t)sprintf(head, "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n");
  memcpy(head + head_len, role, role_len);
  head_len += role_len;

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  // Enables the kernel's receive stamps for every socket (accepted ones set it too).
  setsockopt(lfd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
  if (bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 4096)) { perror("listen"); return 1; }
  socklen_t al = sizeof a;
  getsockname(lfd, (struct sockaddr *)&a, &al);
  epfd = epoll_create1(EPOLL_CLOEXEC);
  tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  struct epoll_event ev = { .events = EPOLLIN, .data.u32 = LISTEN_ID };
  epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev);
  ev.data.u32 = TIMER_ID;
  epoll_ctl(epfd, EPOLL_CTL_ADD, tfd, &ev);
  ev.data.u32 = STDIN_ID;
  epoll_ctl(epfd, EPOLL_CTL_ADD, 0, &ev);
  printf("%d\n", ntohs(a.sin_port));
  fflush(stdout);

  struct epoll_event evs[1024];
  char line[256];
  size_t line_len = 0;
  for (;;) {
    int n = epoll_wait(epfd, evs, 1024, -1);
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < n; i++) {
      uint32_t id = evs[i].data.u32;
      if (id == LISTEN_ID) {
        accept_all(lfd);
      } else if (id == TIMER_ID) {
        uint64_t x;
        if (read(tfd, &x, sizeof x) < 0) { /* spurious */ }
      } else if (id == STDIN_ID) {
        ssize_t r = read(0, line + line_len, sizeof line - line_len - 1);
        if (r <= 0) return 0;
        line_len += (size_t)r;
        line[line_len] = 0;
        if (strchr(line, '\n')) {
          if (strncmp(line, "take", 4) == 0) print_records();
          line_len = 0;
        }
      } else if ((int)id < nconns && conns[id].fd >= 0) {
        if ((evs[i].events & EPOLLOUT) && conns[id].out_len > 0) {
          conn_t *c = &conns[id];
          char *out = c->out;
          size_t len = c->out_len;
          c->out = NULL;
          c->out_len = 0;
          struct epoll_event mod = { .events = EPOLLIN, .data.u32 = id };
          epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &mod);
          send_bytes((int)id, out, len);
          free(out);
        }
        if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) read_conn((int)id);
      }
    }
    pump();
  }
  return 0;
}
