/*
 * pingpong.c: the raw baseline of the send_input round-trip figure.  Owns
 * a msgpack ping-pong over a socketpair between two processes, with frames
 * shaped like the protocol's INPUT and INPUT_ACK (10-byte header, a map of
 * the same keys and sizes), packed and unpacked with msgpack-c each way.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <msgpack.h>

#define HDR_LEN		10
#define T_INPUT		7
#define T_INPUT_ACK	8

/* A failure here invalidates the figure: say so and stop. */
static void __attribute__((noreturn))
die(const char *what)
{
	fprintf(stderr, "pingpong: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Blocking reads until len bytes are in, as a channel would gather them. */
static void
read_full(int fd, void *buf, size_t len)
{
	char	*p = buf;
	ssize_t	 n;

	while (len > 0) {
		if ((n = read(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			die("read");
		}
		if (n == 0) {
			errno = EPIPE;
			die("read");
		}
		p += n;
		len -= (size_t)n;
	}
}

/* One frame out: header and body in one write, like an evbuffer flush. */
static void
send_frame(int fd, uint16_t type, const msgpack_sbuffer *sb)
{
	char	*buf;
	size_t	 len = HDR_LEN + sb->size, off = 0;
	ssize_t	 n;

	if ((buf = malloc(len)) == NULL)
		die("malloc");
	buf[0] = 'C';
	buf[1] = 'W';
	buf[2] = 1;
	buf[3] = 0;
	buf[4] = (char)(type >> 8);
	buf[5] = (char)type;
	buf[6] = (char)(sb->size >> 24);
	buf[7] = (char)(sb->size >> 16);
	buf[8] = (char)(sb->size >> 8);
	buf[9] = (char)sb->size;
	memcpy(buf + HDR_LEN, sb->data, sb->size);
	while (off < len) {
		if ((n = write(fd, buf + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			die("write");
		}
		off += (size_t)n;
	}
	free(buf);
}

/* One whole frame in: the header checked, the body returned in *body. */
static uint32_t
read_frame(int fd, uint16_t want, unsigned char *hdr, char **body)
{
	uint32_t	len;

	read_full(fd, hdr, HDR_LEN);
	if (hdr[0] != 'C' || hdr[1] != 'W' ||
	    ((uint16_t)hdr[4] << 8 | hdr[5]) != want) {
		errno = EPROTO;
		die("header");
	}
	len = (uint32_t)hdr[6] << 24 | (uint32_t)hdr[7] << 16 |
	    (uint32_t)hdr[8] << 8 | hdr[9];
	if ((*body = malloc(len)) == NULL)
		die("malloc");
	read_full(fd, *body, len);
	return len;
}

/* A body unpacked; the submission id is what every side checks. */
static uint64_t
parse_body(const char *body, uint32_t len)
{
	msgpack_unpacked	 u;
	msgpack_object_kv	*kv;
	uint32_t		 i;
	uint64_t		 id = UINT64_MAX;

	msgpack_unpacked_init(&u);
	if (msgpack_unpack_next(&u, body, len, NULL) != MSGPACK_UNPACK_SUCCESS ||
	    u.data.type != MSGPACK_OBJECT_MAP) {
		errno = EPROTO;
		die("unpack");
	}
	for (i = 0; i < u.data.via.map.size; i++) {
		kv = &u.data.via.map.ptr[i];
		if (kv->key.type == MSGPACK_OBJECT_STR &&
		    kv->key.via.str.size == 13 &&
		    memcmp(kv->key.via.str.ptr, "submission_id", 13) == 0 &&
		    kv->val.type == MSGPACK_OBJECT_POSITIVE_INTEGER)
			id = kv->val.via.u64;
	}
	msgpack_unpacked_destroy(&u);
	return id;
}

/* One frame in, unpacked, its submission id returned. */
static uint64_t
recv_frame(int fd, uint16_t want)
{
	unsigned char	 hdr[HDR_LEN];
	char		*body;
	uint32_t	 len;
	uint64_t	 id;

	len = read_frame(fd, want, hdr, &body);
	id = parse_body(body, len);
	free(body);
	return id;
}

/* A frame passed on after unpacking it, as a relay in the middle would. */
static void
forward_frame(int from, int to, uint16_t want)
{
	unsigned char	 hdr[HDR_LEN];
	char		*body;
	uint32_t	 len;
	ssize_t		 n;
	size_t		 off = 0;
	struct iovec	 iov[2];

	len = read_frame(from, want, hdr, &body);
	(void)parse_body(body, len);
	iov[0].iov_base = hdr;
	iov[0].iov_len = HDR_LEN;
	iov[1].iov_base = body;
	iov[1].iov_len = len;
	while (off < HDR_LEN + (size_t)len) {
		if ((n = writev(to, iov, 2)) == -1) {
			if (errno == EINTR)
				continue;
			die("writev");
		}
		off += (size_t)n;
		if (off < HDR_LEN + (size_t)len) {
			errno = EAGAIN;
			die("short writev");
		}
	}
	free(body);
}

/* The diagnostic third process: every INPUT on, every INPUT_ACK back. */
static void
relay(int up, int down, long n)
{
	long	i;

	for (i = 0; i < n; i++) {
		forward_frame(up, down, T_INPUT);
		forward_frame(down, up, T_INPUT_ACK);
	}
}

/* msgpack's str key then value, as proto/msg.c writes a field. */
static void
pack_key(msgpack_packer *pk, const char *key)
{
	msgpack_pack_str(pk, strlen(key));
	msgpack_pack_str_body(pk, key, strlen(key));
}

/* The worker's side: every INPUT answered by an INPUT_ACK, until EOF. */
static void
ponger(int fd, long n)
{
	msgpack_sbuffer	sb;
	msgpack_packer	pk;
	uint64_t	id;
	long		i;

	for (i = 0; i < n; i++) {
		id = recv_frame(fd, T_INPUT);
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		msgpack_pack_map(&pk, 2);
		pack_key(&pk, "submission_id");
		msgpack_pack_uint64(&pk, id);
		pack_key(&pk, "delivery");
		msgpack_pack_str(&pk, 5);
		msgpack_pack_str_body(&pk, "stdin", 5);
		send_frame(fd, T_INPUT_ACK, &sb);
		msgpack_sbuffer_destroy(&sb);
	}
}

/* The supervisor's side: N sequential round trips, timed as a whole. */
static double
pinger(int fd, long n, const char *text)
{
	struct timespec	t0, t1;
	msgpack_sbuffer	sb;
	msgpack_packer	pk;
	long		i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		msgpack_pack_map(&pk, 3);
		pack_key(&pk, "submission_id");
		msgpack_pack_uint64(&pk, (uint64_t)i + 1);
		pack_key(&pk, "message");
		msgpack_pack_str(&pk, strlen(text));
		msgpack_pack_str_body(&pk, text, strlen(text));
		pack_key(&pk, "interrupt");
		msgpack_pack_false(&pk);
		send_frame(fd, T_INPUT, &sb);
		msgpack_sbuffer_destroy(&sb);
		if (recv_frame(fd, T_INPUT_ACK) != (uint64_t)i + 1) {
			errno = EPROTO;
			die("submission id");
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) /
	    1e3 / (double)n;
}

/*
 * Print the mean round trip in microseconds.  With "relay", a third
 * process sits between the two and forwards every frame after unpacking
 * it: the hop count of a front end -> supervisor -> worker round trip.
 */
int
main(int argc, char **argv)
{
	char	*text;
	long	 n, size;
	pid_t	 pid, rpid = -1;
	int	 sv[2], rv[2], st, via_relay;
	double	 us;

	if (argc != 3 && !(argc == 4 && strcmp(argv[3], "relay") == 0)) {
		fprintf(stderr, "usage: pingpong N MESSAGE_BYTES [relay]\n");
		return 2;
	}
	via_relay = argc == 4;
	n = strtol(argv[1], NULL, 10);
	size = strtol(argv[2], NULL, 10);
	if (n <= 0 || size < 0 || (text = malloc((size_t)size + 1)) == NULL)
		return 2;
	memset(text, 'x', (size_t)size);
	text[size] = '\0';
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		die("socketpair");
	if (via_relay) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, rv) == -1)
			die("socketpair");
		if ((rpid = fork()) == -1)
			die("fork");
		if (rpid == 0) {
			close(sv[0]);
			close(rv[1]);
			relay(sv[1], rv[0], n);
			_exit(0);
		}
		close(sv[1]);
		close(rv[0]);
		sv[1] = rv[1];
	}
	if ((pid = fork()) == -1)
		die("fork");
	if (pid == 0) {
		close(sv[0]);
		ponger(sv[1], n);
		_exit(0);
	}
	close(sv[1]);
	us = pinger(sv[0], n, text);
	close(sv[0]);
	if (waitpid(pid, &st, 0) == -1 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return 1;
	if (rpid != -1 && (waitpid(rpid, &st, 0) == -1 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0))
		return 1;
	printf("%.2f\n", us);
	free(text);
	return 0;
}
