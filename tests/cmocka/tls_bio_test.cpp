// The DoT BIO and the failure classification, under injected socket faults.
// send() and recv() are wrapped (--wrap=send,recv): every call the BIO makes
// is answered from the queue the test fills with will_return().
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

// C++ headers come before cmocka.h, which defines a fail() macro that breaks
// std::basic_ios::fail() (pulled in by <chrono> through the upstream headers).
#include "upstream/tls_bio.hpp"

extern "C" {
#include <cmocka.h>
}

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>
#include <mbedtls/version.h>
#include <mbedtls/x509.h>
#if MBEDTLS_VERSION_MAJOR >= 3
#include <psa/crypto.h>
#endif

#include <cstring>
#include <string>

using nxdns::upstream::Cause;
using nxdns::upstream::classify_connect_errno;
using nxdns::upstream::classify_io_errno;
using nxdns::upstream::classify_tls;
using nxdns::upstream::tls_step;
using nxdns::upstream::TlsPhase;
using nxdns::upstream::TlsStep;

namespace {

int g_send_calls = 0;
int g_recv_calls = 0;
int g_last_send_flags = 0;
bool g_send_swallows_all = false;  // pretend every send fully succeeds
unsigned char g_first_sent[6] = {};  // the first octets of the first send

void inject_send(long ret, int err) {
  will_return(__wrap_send, ret);
  will_return(__wrap_send, err);
}
void inject_recv(long ret, int err) {
  will_return(__wrap_recv, ret);
  will_return(__wrap_recv, err);
}

int reset_counters(void**) {
  g_send_calls = g_recv_calls = 0;
  g_last_send_flags = 0;
  g_send_swallows_all = false;
  std::memset(g_first_sent, 0, sizeof g_first_sent);
  return 0;
}

nxdns_tls_bio fresh_bio() { return nxdns_tls_bio{42, 0, 0, 0}; }

}  // namespace

extern "C" ssize_t __wrap_send(int fd, const void* buf, size_t len, int flags) {
  assert_int_equal(fd, 42);
  if (g_send_calls == 0) std::memcpy(g_first_sent, buf, len < sizeof g_first_sent ? len : sizeof g_first_sent);
  ++g_send_calls;
  g_last_send_flags = flags;
  if (g_send_swallows_all) return static_cast<ssize_t>(len);
  const long ret = mock_type(long);
  const int err = mock_type(int);
  if (ret < 0) errno = err;
  return static_cast<ssize_t>(ret);
}

extern "C" ssize_t __wrap_recv(int fd, void* buf, size_t len, int flags) {
  assert_int_equal(fd, 42);
  (void)flags;
  ++g_recv_calls;
  const long ret = mock_type(long);
  const int err = mock_type(int);
  if (ret < 0) {
    errno = err;
  } else {
    std::memset(buf, 0x17, static_cast<size_t>(ret) < len ? static_cast<size_t>(ret) : len);
  }
  return static_cast<ssize_t>(ret);
}

// --- send side ---

static void send_passes_bytes_without_sigpipe(void**) {
  nxdns_tls_bio bio = fresh_bio();
  const unsigned char data[10] = {};
  inject_send(10, 0);
  assert_int_equal(nxdns_tls_bio_send(&bio, data, sizeof data), 10);
  // A reset peer must surface as EPIPE, never as a process-killing SIGPIPE.
  assert_true(g_last_send_flags & MSG_NOSIGNAL);
}

static void send_partial_write_reports_the_count(void**) {
  nxdns_tls_bio bio = fresh_bio();
  const unsigned char data[10] = {};
  inject_send(3, 0);
  assert_int_equal(nxdns_tls_bio_send(&bio, data, sizeof data), 3);
}

static void send_eagain_is_want_write(void**) {
  nxdns_tls_bio bio = fresh_bio();
  const unsigned char data[4] = {};
  inject_send(-1, EAGAIN);
  const int ret = nxdns_tls_bio_send(&bio, data, sizeof data);
  assert_int_equal(ret, MBEDTLS_ERR_SSL_WANT_WRITE);
  assert_int_equal(bio.last_errno, 0);
  assert_true(tls_step(ret) == TlsStep::want_write);
}

static void send_eintr_is_retried(void**) {
  nxdns_tls_bio bio = fresh_bio();
  const unsigned char data[7] = {};
  inject_send(-1, EINTR);
  inject_send(-1, EINTR);
  inject_send(7, 0);
  assert_int_equal(nxdns_tls_bio_send(&bio, data, sizeof data), 7);
  assert_int_equal(g_send_calls, 3);
}

static void send_epipe_is_broken_pipe(void**) {
  nxdns_tls_bio bio = fresh_bio();
  const unsigned char data[4] = {};
  inject_send(-1, EPIPE);
  const int ret = nxdns_tls_bio_send(&bio, data, sizeof data);
  assert_int_equal(ret, MBEDTLS_ERR_NET_SEND_FAILED);
  assert_int_equal(bio.last_errno, EPIPE);
  const auto f = classify_tls(ret, bio, TlsPhase::established);
  assert_true(f.cause == Cause::broken_pipe);
  assert_non_null(std::strstr(f.detail.c_str(), "send"));
}

static void send_econnreset_is_connection_reset(void**) {
  nxdns_tls_bio bio = fresh_bio();
  const unsigned char data[4] = {};
  inject_send(-1, ECONNRESET);
  const int ret = nxdns_tls_bio_send(&bio, data, sizeof data);
  assert_int_equal(ret, MBEDTLS_ERR_NET_CONN_RESET);
  assert_true(classify_tls(ret, bio, TlsPhase::established).cause == Cause::connection_reset);
}

static void send_enobufs_is_local_resource(void**) {
  nxdns_tls_bio bio = fresh_bio();
  const unsigned char data[4] = {};
  inject_send(-1, ENOBUFS);
  const int ret = nxdns_tls_bio_send(&bio, data, sizeof data);
  // Ours, not the upstream's: never a reason to redial or blame the server.
  assert_true(classify_tls(ret, bio, TlsPhase::established).cause == Cause::local_resource);
}

// --- recv side ---

static void recv_returns_bytes(void**) {
  nxdns_tls_bio bio = fresh_bio();
  unsigned char buf[16];
  inject_recv(5, 0);
  assert_int_equal(nxdns_tls_bio_recv(&bio, buf, sizeof buf), 5);
  assert_int_equal(bio.peer_eof, 0);
}

static void recv_zero_is_eof(void**) {
  nxdns_tls_bio bio = fresh_bio();
  unsigned char buf[16];
  inject_recv(0, 0);
  const int ret = nxdns_tls_bio_recv(&bio, buf, sizeof buf);
  assert_int_equal(ret, 0);
  assert_int_equal(bio.peer_eof, 1);
  // mbedTLS reports it as a 0 read (2.28) or MBEDTLS_ERR_SSL_CONN_EOF.
  assert_true(classify_tls(0, bio, TlsPhase::established).cause == Cause::eof);
  assert_true(classify_tls(MBEDTLS_ERR_SSL_CONN_EOF, bio, TlsPhase::established).cause == Cause::eof);
}

static void recv_eagain_is_want_read(void**) {
  nxdns_tls_bio bio = fresh_bio();
  unsigned char buf[16];
  inject_recv(-1, EWOULDBLOCK);
  const int ret = nxdns_tls_bio_recv(&bio, buf, sizeof buf);
  assert_int_equal(ret, MBEDTLS_ERR_SSL_WANT_READ);
  assert_true(tls_step(ret) == TlsStep::want_read);
}

static void recv_eintr_is_retried(void**) {
  nxdns_tls_bio bio = fresh_bio();
  unsigned char buf[16];
  inject_recv(-1, EINTR);
  inject_recv(2, 0);
  assert_int_equal(nxdns_tls_bio_recv(&bio, buf, sizeof buf), 2);
  assert_int_equal(g_recv_calls, 2);
}

static void recv_econnreset_is_connection_reset(void**) {
  nxdns_tls_bio bio = fresh_bio();
  unsigned char buf[16];
  inject_recv(-1, ECONNRESET);
  const int ret = nxdns_tls_bio_recv(&bio, buf, sizeof buf);
  assert_int_equal(ret, MBEDTLS_ERR_NET_CONN_RESET);
  assert_int_equal(bio.last_errno, ECONNRESET);
  const auto f = classify_tls(ret, bio, TlsPhase::established);
  assert_true(f.cause == Cause::connection_reset);
  assert_true(nxdns::upstream::is_connection_lifecycle(f.cause));
}

static void recv_etimedout_is_connection_reset(void**) {
  nxdns_tls_bio bio = fresh_bio();
  unsigned char buf[16];
  inject_recv(-1, ETIMEDOUT);
  const int ret = nxdns_tls_bio_recv(&bio, buf, sizeof buf);
  assert_int_equal(ret, MBEDTLS_ERR_NET_RECV_FAILED);
  assert_true(classify_tls(ret, bio, TlsPhase::established).cause == Cause::connection_reset);
}

// --- mbedTLS codes ---

static void mbedtls_codes_map_to_causes(void**) {
  const nxdns_tls_bio bio = fresh_bio();
  const auto est = TlsPhase::established;
  assert_true(classify_tls(MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY, bio, est).cause == Cause::tls_closed);
  assert_true(classify_tls(MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE, bio, est).cause == Cause::tls_protocol);
  assert_true(classify_tls(MBEDTLS_ERR_SSL_INVALID_MAC, bio, est).cause == Cause::tls_protocol);
  assert_true(classify_tls(MBEDTLS_ERR_SSL_INVALID_RECORD, bio, est).cause == Cause::tls_protocol);
  assert_true(classify_tls(MBEDTLS_ERR_SSL_ALLOC_FAILED, bio, est).cause == Cause::local_resource);
  assert_true(classify_tls(MBEDTLS_ERR_X509_CERT_VERIFY_FAILED, bio, est).cause == Cause::certificate);
  assert_true(classify_tls(MBEDTLS_ERR_X509_CERT_VERIFY_FAILED, bio, TlsPhase::handshake).cause ==
              Cause::certificate);
  // The detail names the library's code.
  const auto f = classify_tls(MBEDTLS_ERR_SSL_INVALID_MAC, bio, est);
  assert_non_null(std::strstr(f.detail.c_str(), "mbedtls -0x"));
}

static void handshake_phase_failures_are_handshake_failed(void**) {
  nxdns_tls_bio bio = fresh_bio();
  const auto hs = TlsPhase::handshake;
  // A connection that ends before the handshake completes was never a
  // session: never a stale-reuse symptom, never lifecycle.
  assert_true(classify_tls(MBEDTLS_ERR_SSL_CONN_EOF, bio, hs).cause == Cause::handshake_failed);
  assert_true(classify_tls(MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY, bio, hs).cause == Cause::handshake_failed);
  assert_true(classify_tls(MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE, bio, hs).cause == Cause::handshake_failed);
  bio.last_errno = ECONNRESET;
  assert_true(classify_tls(MBEDTLS_ERR_NET_CONN_RESET, bio, hs).cause == Cause::handshake_failed);
}

static void tls_step_maps_return_codes(void**) {
  assert_true(tls_step(0) == TlsStep::progress);
  assert_true(tls_step(17) == TlsStep::progress);
  assert_true(tls_step(MBEDTLS_ERR_SSL_WANT_READ) == TlsStep::want_read);
  assert_true(tls_step(MBEDTLS_ERR_SSL_WANT_WRITE) == TlsStep::want_write);
  assert_true(tls_step(MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) == TlsStep::failed);
#if defined(MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET)
  // TLS 1.3 tickets arrive after the handshake: read again, do not wait.
  assert_true(tls_step(MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET) == TlsStep::again);
#endif
}

static void errno_classification(void**) {
  assert_true(classify_io_errno(EPIPE) == Cause::broken_pipe);
  assert_true(classify_io_errno(ECONNRESET) == Cause::connection_reset);
  assert_true(classify_io_errno(ENOMEM) == Cause::local_resource);
  assert_true(classify_connect_errno(ECONNREFUSED) == Cause::connect_failed);
  assert_true(classify_connect_errno(ETIMEDOUT) == Cause::connect_failed);
  assert_true(classify_connect_errno(EMFILE) == Cause::local_resource);
  assert_true(classify_connect_errno(EADDRNOTAVAIL) == Cause::local_resource);
}

// --- the BIO under mbedTLS: a handshake over the wrapped socket ---

namespace {

// A bare client context on the wrapped fd. Verification is off here only
// because no certificate is ever exchanged: these tests stop at the first
// server flight. (The product's config has no such switch.)
struct BareClient {
  mbedtls_entropy_context entropy;
  mbedtls_ctr_drbg_context drbg;
  mbedtls_ssl_config conf;
  mbedtls_ssl_context ssl;
  nxdns_tls_bio bio = nxdns_tls_bio{42, 0, 0, 0};

  BareClient() {
#if MBEDTLS_VERSION_MAJOR >= 3 && defined(MBEDTLS_PSA_CRYPTO_C)
    assert_int_equal(psa_crypto_init(), PSA_SUCCESS);
#endif
    mbedtls_entropy_init(&entropy);
    mbedtls_ctr_drbg_init(&drbg);
    mbedtls_ssl_config_init(&conf);
    mbedtls_ssl_init(&ssl);
    assert_int_equal(mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy, nullptr, 0), 0);
    assert_int_equal(mbedtls_ssl_config_defaults(&conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                                 MBEDTLS_SSL_PRESET_DEFAULT),
                     0);
    mbedtls_ssl_conf_authmode(&conf, MBEDTLS_SSL_VERIFY_NONE);
    mbedtls_ssl_conf_rng(&conf, mbedtls_ctr_drbg_random, &drbg);
    assert_int_equal(mbedtls_ssl_setup(&ssl, &conf), 0);
    assert_int_equal(mbedtls_ssl_set_hostname(&ssl, "dot.test"), 0);
    mbedtls_ssl_set_bio(&ssl, &bio, nxdns_tls_bio_send, nxdns_tls_bio_recv, nullptr);
  }
  ~BareClient() {
    mbedtls_ssl_free(&ssl);
    mbedtls_ssl_config_free(&conf);
    mbedtls_ctr_drbg_free(&drbg);
    mbedtls_entropy_free(&entropy);
  }
};

}  // namespace

static void handshake_waits_on_eagain_then_fails_on_eof(void**) {
  BareClient c;
  g_send_swallows_all = true;  // the ClientHello goes out whole
  inject_recv(-1, EAGAIN);
  int ret = mbedtls_ssl_handshake(&c.ssl);
  assert_true(tls_step(ret) == TlsStep::want_read);
  assert_true(g_send_calls >= 1);

  inject_recv(0, 0);  // the server hangs up instead of answering
  ret = mbedtls_ssl_handshake(&c.ssl);
  assert_true(tls_step(ret) == TlsStep::failed);
  assert_int_equal(c.bio.peer_eof, 1);
  const auto f = classify_tls(ret, c.bio, TlsPhase::handshake);
  assert_true(f.cause == Cause::handshake_failed);
  assert_non_null(std::strstr(f.detail.c_str(), "EOF"));
}

static void handshake_reset_names_the_errno(void**) {
  BareClient c;
  g_send_swallows_all = true;
  inject_recv(-1, ECONNRESET);
  const int ret = mbedtls_ssl_handshake(&c.ssl);
  assert_int_equal(ret, MBEDTLS_ERR_NET_CONN_RESET);
  const auto f = classify_tls(ret, c.bio, TlsPhase::handshake);
  assert_true(f.cause == Cause::handshake_failed);
  assert_non_null(std::strstr(f.detail.c_str(), "reset"));
}

// While the connect is under way the BIO holds output: mbedTLS builds the
// whole ClientHello and keeps it, no syscall is made, and the first step
// after the connect sends it (a handshake record whose message is a
// ClientHello) before reading the server's flight.
static void held_output_keeps_the_client_hello_until_released(void**) {
  BareClient c;
  c.bio.hold_output = 1;
  int ret = mbedtls_ssl_handshake(&c.ssl);
  assert_true(tls_step(ret) == TlsStep::want_write);
  assert_int_equal(g_send_calls, 0);
  assert_int_equal(g_recv_calls, 0);

  c.bio.hold_output = 0;
  g_send_swallows_all = true;
  inject_recv(-1, EAGAIN);
  ret = mbedtls_ssl_handshake(&c.ssl);
  assert_true(tls_step(ret) == TlsStep::want_read);
  assert_true(g_send_calls >= 1);
  assert_int_equal(g_first_sent[0], 0x16);  // TLS record type handshake (RFC 8446 §5.1)
  assert_int_equal(g_first_sent[5], 0x01);  // handshake type client_hello (§4)
  assert_int_equal(c.bio.last_errno, 0);
}

static void handshake_send_blocked_is_want_write(void**) {
  BareClient c;
  inject_send(-1, EAGAIN);
  const int ret = mbedtls_ssl_handshake(&c.ssl);
  assert_true(tls_step(ret) == TlsStep::want_write);
  assert_int_equal(g_recv_calls, 0);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(send_passes_bytes_without_sigpipe, reset_counters),
      cmocka_unit_test_setup(send_partial_write_reports_the_count, reset_counters),
      cmocka_unit_test_setup(send_eagain_is_want_write, reset_counters),
      cmocka_unit_test_setup(send_eintr_is_retried, reset_counters),
      cmocka_unit_test_setup(send_epipe_is_broken_pipe, reset_counters),
      cmocka_unit_test_setup(send_econnreset_is_connection_reset, reset_counters),
      cmocka_unit_test_setup(send_enobufs_is_local_resource, reset_counters),
      cmocka_unit_test_setup(recv_returns_bytes, reset_counters),
      cmocka_unit_test_setup(recv_zero_is_eof, reset_counters),
      cmocka_unit_test_setup(recv_eagain_is_want_read, reset_counters),
      cmocka_unit_test_setup(recv_eintr_is_retried, reset_counters),
      cmocka_unit_test_setup(recv_econnreset_is_connection_reset, reset_counters),
      cmocka_unit_test_setup(recv_etimedout_is_connection_reset, reset_counters),
      cmocka_unit_test_setup(mbedtls_codes_map_to_causes, reset_counters),
      cmocka_unit_test_setup(handshake_phase_failures_are_handshake_failed, reset_counters),
      cmocka_unit_test_setup(tls_step_maps_return_codes, reset_counters),
      cmocka_unit_test_setup(errno_classification, reset_counters),
      cmocka_unit_test_setup(handshake_waits_on_eagain_then_fails_on_eof, reset_counters),
      cmocka_unit_test_setup(handshake_reset_names_the_errno, reset_counters),
      cmocka_unit_test_setup(handshake_send_blocked_is_want_write, reset_counters),
      cmocka_unit_test_setup(held_output_keeps_the_client_hello_until_released, reset_counters),
  };
  return cmocka_run_group_tests_name("tls_bio", tests, nullptr, nullptr);
}
