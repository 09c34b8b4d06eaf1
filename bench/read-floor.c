// The kernel's floor under any benchmark client on this machine: C, no runtime, N sockets read with epoll and
// one recvmsg (with the receive timestamp, as spectune's reader does) per readiness, in rounds 1 ms apart so that
// one wake-up serves many sockets (the cheapest way to read them). Prints the process CPU per read. Used by
// bench/accuracy.mjs next to spectune's own CPU per token.
// usage: read-floor PORT CONNECTIONS MILLISECONDS
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "../native/clock-ms.h"

static double cpu_us(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 + r.ru_utime.tv_usec + r.ru_stime.tv_usec;
}

int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: read-floor PORT CONNECTIONS MILLISECONDS\n"); return 2; }
  int port = atoi(argv[1]), n = atoi(argv[2]);
  double ms = atof(argv[3]);
  int ep = epoll_create1(0);
  int one = 1;
  for (int i = 0; i < n; i++) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(0x7f000001) };
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { perror("connect"); return 1; }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
  }
  static char buf[65536], control[256];
  struct epoll_event evs[1024];
  long reads = 0;
  double warm_until = mono_ms() + 500, end = 0, c0 = 0;
  for (;;) {
    int k = epoll_wait(ep, evs, 1024, 100);
    for (int i = 0; i < k; i++) {
      struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf };
      struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control };
      if (recvmsg(evs[i].data.fd, &m, MSG_DONTWAIT) > 0 && end > 0) reads++;
    }
    if (k > 0) {
      struct timespec round = { 0, 1000000L };
      nanosleep(&round, NULL);
    }
    double now = mono_ms();
    if (end == 0 && now >= warm_until) { end = now + ms; c0 = cpu_us(); }
    if (end > 0 && now >= end) break;
  }
  printf("%.3f\n", (cpu_us() - c0) / (reads > 0 ? reads : 1));
  return 0;
}
