#pragma once
// An in-process DNS-over-TLS server on a loopback socket, driven by the same
// event_base as the transport under test, with a test PKI generated at run
// time. Deterministic where a separate fixture process would not be: the test
// decides exactly when the server runs (it runs only inside the loop), and
// every counter is read without IPC.
//
// Header-only so the upstream test binary (one executable from the
// *_test.cpp glob) needs no build change; everything is inline.
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/pk.h>
#include <mbedtls/rsa.h>
#include <mbedtls/ssl.h>
#include <mbedtls/version.h>
#include <mbedtls/x509_crt.h>
#if defined(MBEDTLS_SSL_TICKET_C)
#include <mbedtls/ssl_ticket.h>
#endif
#if MBEDTLS_VERSION_MAJOR >= 3
#include <psa/crypto.h>
#else
#include <mbedtls/bignum.h>
#endif
#include <mbedtls/ecp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "dns/message.hpp"
#include "loop/event_handles.hpp"
#include "net/endpoint.hpp"
#include "upstream/tls_bio.hpp"

namespace nxdns::test {

inline void dot_test_psa_init() {
#if MBEDTLS_VERSION_MAJOR >= 3 && defined(MBEDTLS_PSA_CRYPTO_C)
  (void)psa_crypto_init();
#endif
}

// Entropy + DRBG, RAII.
struct TestRng {
  mbedtls_entropy_context entropy;
  mbedtls_ctr_drbg_context drbg;
  TestRng() {
    dot_test_psa_init();
    mbedtls_entropy_init(&entropy);
    mbedtls_ctr_drbg_init(&drbg);
    static const unsigned char pers[] = "nxdns-dot-test";
    if (mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy, pers, sizeof pers - 1) != 0) {
      throw std::runtime_error("test rng seed failed");
    }
  }
  ~TestRng() {
    mbedtls_ctr_drbg_free(&drbg);
    mbedtls_entropy_free(&entropy);
  }
  TestRng(const TestRng&) = delete;
  TestRng& operator=(const TestRng&) = delete;
};

struct PkKey {
  mbedtls_pk_context pk;
  PkKey() { mbedtls_pk_init(&pk); }
  ~PkKey() { mbedtls_pk_free(&pk); }
  PkKey(const PkKey&) = delete;
  PkKey& operator=(const PkKey&) = delete;
};

inline void gen_ec_key(PkKey& k, TestRng& rng) {
  if (mbedtls_pk_setup(&k.pk, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)) != 0 ||
      mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(k.pk), mbedtls_ctr_drbg_random, &rng.drbg) != 0) {
    throw std::runtime_error("test key generation failed");
  }
}

// RSA-2048: the smallest size mbedTLS's default verification profile
// accepts. Only for tests of RSA key exchanges (ECDSA keys are cheaper).
inline void gen_rsa_key(PkKey& k, TestRng& rng) {
  if (mbedtls_pk_setup(&k.pk, mbedtls_pk_info_from_type(MBEDTLS_PK_RSA)) != 0 ||
      mbedtls_rsa_gen_key(mbedtls_pk_rsa(k.pk), mbedtls_ctr_drbg_random, &rng.drbg, 2048, 65537) != 0) {
    throw std::runtime_error("test RSA key generation failed");
  }
}

inline std::string key_pem(PkKey& k) {
  std::vector<unsigned char> buf(4096);
  if (mbedtls_pk_write_key_pem(&k.pk, buf.data(), buf.size()) != 0) throw std::runtime_error("key pem failed");
  return std::string(reinterpret_cast<const char*>(buf.data()));
}

// Issues a certificate for `subject_key` named `subject` (an X.509 DN
// string), signed by `issuer_key` as `issuer`.
inline std::string issue_cert(TestRng& rng, PkKey& subject_key, const std::string& subject, PkKey& issuer_key,
                              const std::string& issuer, bool is_ca, unsigned serial) {
  mbedtls_x509write_cert crt;
  mbedtls_x509write_crt_init(&crt);
  struct Free {
    mbedtls_x509write_cert* c;
    ~Free() { mbedtls_x509write_crt_free(c); }
  } free_crt{&crt};
  mbedtls_x509write_crt_set_version(&crt, MBEDTLS_X509_CRT_VERSION_3);
  mbedtls_x509write_crt_set_md_alg(&crt, MBEDTLS_MD_SHA256);
  mbedtls_x509write_crt_set_subject_key(&crt, &subject_key.pk);
  mbedtls_x509write_crt_set_issuer_key(&crt, &issuer_key.pk);
  int ret = mbedtls_x509write_crt_set_subject_name(&crt, subject.c_str());
  if (ret == 0) ret = mbedtls_x509write_crt_set_issuer_name(&crt, issuer.c_str());
#if MBEDTLS_VERSION_MAJOR >= 3
  unsigned char raw_serial[2] = {static_cast<unsigned char>(serial >> 8), static_cast<unsigned char>(serial)};
  if (ret == 0) ret = mbedtls_x509write_crt_set_serial_raw(&crt, raw_serial, sizeof raw_serial);
#else
  mbedtls_mpi s;
  mbedtls_mpi_init(&s);
  if (ret == 0) ret = mbedtls_mpi_lset(&s, static_cast<mbedtls_mpi_sint>(serial));
  if (ret == 0) ret = mbedtls_x509write_crt_set_serial(&crt, &s);
  mbedtls_mpi_free(&s);
#endif
  if (ret == 0) ret = mbedtls_x509write_crt_set_validity(&crt, "20200101000000", "20991231235959");
  if (ret == 0) ret = mbedtls_x509write_crt_set_basic_constraints(&crt, is_ca ? 1 : 0, is_ca ? 0 : -1);
  if (ret == 0 && is_ca) ret = mbedtls_x509write_crt_set_key_usage(&crt, MBEDTLS_X509_KU_KEY_CERT_SIGN);
  if (ret != 0) throw std::runtime_error("test certificate setup failed");
  std::vector<unsigned char> buf(4096);
  if (mbedtls_x509write_crt_pem(&crt, buf.data(), buf.size(), mbedtls_ctr_drbg_random, &rng.drbg) != 0) {
    throw std::runtime_error("test certificate signing failed");
  }
  return std::string(reinterpret_cast<const char*>(buf.data()));
}

// A CA and a server certificate for `server_name` (in the CN; mbedTLS checks
// the CN when a certificate has no subjectAltName) signed by it. The CA's key
// is ECDSA P-256; the server's too, unless `rsa_server_key`.
struct TestPki {
  std::string ca_pem;
  std::string cert_pem;
  std::string key_pem;

  explicit TestPki(const std::string& server_name, bool rsa_server_key = false) {
    TestRng rng;
    PkKey ca_key, srv_key;
    gen_ec_key(ca_key, rng);
    if (rsa_server_key) {
      gen_rsa_key(srv_key, rng);
    } else {
      gen_ec_key(srv_key, rng);
    }
    const std::string ca_dn = "CN=nxdns test CA,O=nxdns tests";
    ca_pem = issue_cert(rng, ca_key, ca_dn, ca_key, ca_dn, true, 1);
    cert_pem = issue_cert(rng, srv_key, "CN=" + server_name + ",O=nxdns tests", ca_key, ca_dn, false, 2);
    key_pem = nxdns::test::key_pem(srv_key);
  }
};

// A file that deletes itself.
class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    char tmpl[] = "/tmp/nxdns-dot-test-XXXXXX";
    const int fd = ::mkstemp(tmpl);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    path_ = tmpl;
    const ssize_t n = ::write(fd, contents.data(), contents.size());
    ::close(fd);
    if (n != static_cast<ssize_t>(contents.size())) throw std::runtime_error("temp write failed");
  }
  ~TempFile() { ::unlink(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct DotTestBehaviour {
  // Per connection: once this many queries were answered, the next query
  // makes the server close (close_notify + FIN) without answering: what a
  // reused session sees when the server dropped it while idle.
  int close_on_query_after = -1;
  // Per connection: once this many were answered, the next query gets one
  // octet of its length prefix, then the connection is cut (no
  // close_notify): a failure after the first response byte.
  int prefix_byte_then_close_after = -1;
  // Per connection: hold queries until this many arrived, then answer them
  // all in reverse order (pipelining, out-of-order answers).
  std::size_t hold_until = 0;
  bool silent = false;        // read queries, never answer
  bool black_hole = false;    // accept TCP, never speak TLS
  bool wrong_id = false;      // answer with a different ID
  bool wrong_question = false;  // answer a different name
  std::optional<std::uint16_t> keepalive;  // edns-tcp-keepalive TIMEOUT in answers
  std::size_t response_padding = 0;        // RFC 7830 padding octets in answers
  // Of the queries decrypted from one read, answer only the first; swallow
  // the rest (dnsdist 1.7's TLS frontend: one answer per coalesced write).
  bool answer_first_of_batch = false;
  // The only cipher suites the server accepts (IANA ids), and TLS 1.2 at
  // most; empty: the library's defaults and versions.
  std::vector<int> ciphersuites;
};

class DotTestServer {
 public:
  using Behaviour = DotTestBehaviour;

  struct Query {
    std::size_t conn;
    dns::Bytes wire;
  };

  DotTestServer(event_base* base, const TestPki& pki, Behaviour b = {}) : base_(base), behaviour_(b) {
    dot_test_psa_init();
    mbedtls_x509_crt_init(&cert_);
    mbedtls_ssl_config_init(&conf_);
#if defined(MBEDTLS_SSL_TICKET_C)
    mbedtls_ssl_ticket_init(&ticket_);
#endif
    auto parse = [](const std::string& pem) {
      return std::vector<unsigned char>(pem.begin(), pem.end() + 1);  // PEM parsers want the NUL
    };
    auto c = parse(pki.cert_pem), k = parse(pki.key_pem);
    int ret = mbedtls_x509_crt_parse(&cert_, c.data(), c.size());
#if MBEDTLS_VERSION_MAJOR >= 3
    if (ret == 0) ret = mbedtls_pk_parse_key(&key_.pk, k.data(), k.size(), nullptr, 0, mbedtls_ctr_drbg_random, &rng_.drbg);
#else
    if (ret == 0) ret = mbedtls_pk_parse_key(&key_.pk, k.data(), k.size(), nullptr, 0);
#endif
    if (ret == 0) {
      ret = mbedtls_ssl_config_defaults(&conf_, MBEDTLS_SSL_IS_SERVER, MBEDTLS_SSL_TRANSPORT_STREAM,
                                        MBEDTLS_SSL_PRESET_DEFAULT);
    }
    if (ret != 0) throw std::runtime_error("test server TLS setup failed");
    mbedtls_ssl_conf_rng(&conf_, mbedtls_ctr_drbg_random, &rng_.drbg);
    if (mbedtls_ssl_conf_own_cert(&conf_, &cert_, &key_.pk) != 0) throw std::runtime_error("own cert failed");
    if (!behaviour_.ciphersuites.empty()) {
      // conf_ keeps the pointer: the list is a member.
      ciphersuites_ = behaviour_.ciphersuites;
      ciphersuites_.push_back(0);
      mbedtls_ssl_conf_ciphersuites(&conf_, ciphersuites_.data());
#if MBEDTLS_VERSION_MAJOR >= 3
      mbedtls_ssl_conf_max_tls_version(&conf_, MBEDTLS_SSL_VERSION_TLS1_2);
#else
      mbedtls_ssl_conf_max_version(&conf_, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
#endif
    }
#if defined(MBEDTLS_SSL_TICKET_C)
    // Real DoT servers issue session tickets; under TLS 1.3 they arrive
    // after the handshake, which the client must take in its stride.
    if (mbedtls_ssl_ticket_setup(&ticket_, mbedtls_ctr_drbg_random, &rng_.drbg, MBEDTLS_CIPHER_AES_256_GCM, 3600) ==
        0) {
      mbedtls_ssl_conf_session_tickets_cb(&conf_, mbedtls_ssl_ticket_write, mbedtls_ssl_ticket_parse, &ticket_);
    }
#endif

    listen_fd_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = 0;
    socklen_t len = sizeof sa;
    if (!listen_fd_ || ::bind(listen_fd_.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
        ::listen(listen_fd_.get(), 64) != 0 ||
        ::getsockname(listen_fd_.get(), reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
      throw std::runtime_error("test server listen failed");
    }
    port_ = ntohs(sa.sin_port);
    accept_ev_.reset(event_new(base_, listen_fd_.get(), EV_READ | EV_PERSIST, &DotTestServer::on_accept, this));
    event_add(accept_ev_.get(), nullptr);
  }

  ~DotTestServer() {
    accept_ev_.reset();
    for (auto& c : conns_) close_conn(*c, false);
    conns_.clear();
#if defined(MBEDTLS_SSL_TICKET_C)
    mbedtls_ssl_ticket_free(&ticket_);
#endif
    mbedtls_ssl_config_free(&conf_);
    mbedtls_x509_crt_free(&cert_);
  }
  DotTestServer(const DotTestServer&) = delete;
  DotTestServer& operator=(const DotTestServer&) = delete;

  std::uint16_t port() const { return port_; }
  net::Endpoint endpoint() const { return *net::make_endpoint("127.0.0.1", port_); }
  Behaviour& behaviour() { return behaviour_; }

  std::size_t accepts() const { return accepts_; }
  std::size_t queries() const { return queries_.size(); }
  std::size_t answers() const { return answers_; }
  std::size_t swallowed() const { return swallowed_; }
  const std::vector<Query>& received() const { return queries_; }
  std::size_t open_connections() const {
    return static_cast<std::size_t>(std::count_if(conns_.begin(), conns_.end(), [](const auto& c) { return c->open; }));
  }
  // Connections the client closed (EOF or close_notify seen by the server).
  std::size_t closed_by_client() const { return closed_by_client_; }
  std::size_t close_notify_from_client() const { return close_notify_from_client_; }
  std::size_t queries_on(std::size_t conn) const { return conn < conns_.size() ? conns_[conn]->queries : 0; }
  std::size_t connection_count() const { return conns_.size(); }

  // Closes every connection now (close_notify when established): an idle
  // close by the server.
  void close_all_connections() {
    for (auto& c : conns_) close_conn(*c, true);
  }

  // A WAN outage as a household router ends it when it comes back with a
  // new public address: every connection open at begin_outage(), and every
  // one accepted before end_outage(), is dead for good (nothing is read from
  // it or written to it, and neither end is told); connections accepted
  // after end_outage() are served as before.
  void begin_outage() {
    outage_ = true;
    for (auto& c : conns_) kill(*c);
  }
  void end_outage() { outage_ = false; }
  // Connection `conn` (in accept order) was served: accepted outside an
  // outage, and not taken by one since.
  bool served(std::size_t conn) const { return conn < conns_.size() && !conns_[conn]->dead; }

 private:
  struct Conn {
    DotTestServer* server = nullptr;
    std::size_t index = 0;
    bool open = false;
    bool established = false;
    loop::UniqueFd fd;
    loop::EventPtr read_ev, write_ev;
    bool write_armed = false;
    mbedtls_ssl_context ssl;
    bool ssl_live = false;
    nxdns_tls_bio bio{-1, 0, 0, 0};
    dns::Bytes in;
    dns::Bytes out;
    std::size_t queries = 0;
    std::size_t answered = 0;
    std::vector<dns::Bytes> held;
    bool dead = false;  // on the path an outage took (begin_outage())
  };

  void kill(Conn& c) {
    c.dead = true;
    c.read_ev.reset();
    c.write_ev.reset();
    c.write_armed = false;
  }

  static void on_accept(evutil_socket_t fd, short, void* arg) {
    auto* self = static_cast<DotTestServer*>(arg);
    for (;;) {
      const int c = ::accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (c < 0) return;
      try {
        self->adopt(c);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "dot test server: %s\n", e.what());
      }
    }
  }

  void adopt(int fd) {
    ++accepts_;
    auto c = std::make_unique<Conn>();
    c->server = this;
    c->index = conns_.size();
    c->open = true;
    c->fd.reset(fd);
    const int one = 1;
    (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->dead = outage_;
    if (!behaviour_.black_hole && !outage_) {
      c->bio.fd = fd;
      mbedtls_ssl_init(&c->ssl);
      c->ssl_live = true;
      if (mbedtls_ssl_setup(&c->ssl, &conf_) != 0) throw std::runtime_error("server ssl setup failed");
      mbedtls_ssl_set_bio(&c->ssl, &c->bio, nxdns_tls_bio_send, nxdns_tls_bio_recv, nullptr);
      c->read_ev.reset(event_new(base_, fd, EV_READ | EV_PERSIST, &DotTestServer::on_conn, c.get()));
      c->write_ev.reset(event_new(base_, fd, EV_WRITE | EV_PERSIST, &DotTestServer::on_conn, c.get()));
      event_add(c->read_ev.get(), nullptr);
    }
    conns_.push_back(std::move(c));
  }

  static void on_conn(evutil_socket_t, short, void* arg) {
    auto* c = static_cast<Conn*>(arg);
    try {
      c->server->drive(*c);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dot test server: %s\n", e.what());
      c->server->close_conn(*c, false);
    }
  }

  void want_write(Conn& c, bool on) {
    if (on == c.write_armed || !c.write_ev) return;
    if (on) {
      event_add(c.write_ev.get(), nullptr);
    } else {
      event_del(c.write_ev.get());
    }
    c.write_armed = on;
  }

  void drive(Conn& c) {
    if (!c.open) return;
    if (!c.established) {
      const int ret = mbedtls_ssl_handshake(&c.ssl);
      if (ret == MBEDTLS_ERR_SSL_WANT_READ) return want_write(c, false);
      if (ret == MBEDTLS_ERR_SSL_WANT_WRITE) return want_write(c, true);
      if (ret != 0) return close_conn(c, false);
      c.established = true;
      want_write(c, false);
    }
    if (!flush(c)) return;
    unsigned char buf[4096];
    for (;;) {
      const int ret = mbedtls_ssl_read(&c.ssl, buf, sizeof buf);
      if (ret > 0) {
        c.in.insert(c.in.end(), buf, buf + ret);
        if (!take_queries(c)) return;
        continue;
      }
      if (ret == MBEDTLS_ERR_SSL_WANT_READ) return;
      if (ret == MBEDTLS_ERR_SSL_WANT_WRITE) return want_write(c, true);
      if (upstream::tls_step(ret) == upstream::TlsStep::again) continue;
      ++closed_by_client_;
      if (ret == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) ++close_notify_from_client_;
      return close_conn(c, false);
    }
  }

  bool flush(Conn& c) {
    while (!c.out.empty()) {
      const int ret = mbedtls_ssl_write(&c.ssl, c.out.data(), c.out.size());
      if (ret > 0) {
        c.out.erase(c.out.begin(), c.out.begin() + ret);
        continue;
      }
      if (ret == MBEDTLS_ERR_SSL_WANT_WRITE) {
        want_write(c, true);
        return true;
      }
      if (ret == MBEDTLS_ERR_SSL_WANT_READ) return true;
      close_conn(c, false);
      return false;
    }
    want_write(c, false);
    return true;
  }

  bool take_queries(Conn& c) {
    std::size_t in_batch = 0;
    while (c.in.size() >= 2) {
      const std::size_t len = (static_cast<std::size_t>(c.in[0]) << 8) | c.in[1];
      if (c.in.size() < 2 + len) break;
      dns::Bytes q(c.in.begin() + 2, c.in.begin() + 2 + static_cast<std::ptrdiff_t>(len));
      c.in.erase(c.in.begin(), c.in.begin() + 2 + static_cast<std::ptrdiff_t>(len));
      if (behaviour_.answer_first_of_batch && in_batch++ > 0) {
        ++c.queries;
        queries_.push_back(Query{c.index, q});
        ++swallowed_;
        continue;
      }
      if (!on_query(c, std::move(q))) return false;
    }
    return true;
  }

  bool on_query(Conn& c, dns::Bytes q) {
    ++c.queries;
    queries_.push_back(Query{c.index, q});
    const Behaviour& b = behaviour_;
    if (b.close_on_query_after >= 0 && c.answered >= static_cast<std::size_t>(b.close_on_query_after)) {
      close_conn(c, true);
      return false;
    }
    if (b.prefix_byte_then_close_after >= 0 && c.answered >= static_cast<std::size_t>(b.prefix_byte_then_close_after)) {
      const dns::Bytes r = answer_for(q);
      const unsigned char first = static_cast<unsigned char>(r.size() >> 8);
      (void)mbedtls_ssl_write(&c.ssl, &first, 1);
      close_conn(c, false);
      return false;
    }
    if (b.silent) return true;
    if (b.hold_until > 0) {
      c.held.push_back(std::move(q));
      if (c.held.size() < b.hold_until) return true;
      std::vector<dns::Bytes> batch;
      batch.swap(c.held);
      for (auto it = batch.rbegin(); it != batch.rend(); ++it) send_answer(c, answer_for(*it));
      return flush(c);
    }
    send_answer(c, answer_for(q));
    return flush(c);
  }

  void send_answer(Conn& c, const dns::Bytes& r) {
    c.out.push_back(static_cast<std::uint8_t>(r.size() >> 8));
    c.out.push_back(static_cast<std::uint8_t>(r.size() & 0xFF));
    c.out.insert(c.out.end(), r.begin(), r.end());
    ++c.answered;
    ++answers_;
  }

  static void put16(dns::Bytes& b, std::uint16_t v) {
    b.push_back(static_cast<std::uint8_t>(v >> 8));
    b.push_back(static_cast<std::uint8_t>(v & 0xFF));
  }

  // A NOERROR answer carrying the question (and one A record), optionally
  // with an OPT holding keepalive and padding.
  dns::Bytes answer_for(const dns::Bytes& q) const {
    const dns::QueryParse p = dns::parse_query(q);
    if (!p.query) throw std::runtime_error("test server got an unparseable query");
    dns::Bytes question(q.begin() + dns::header_size, q.begin() + static_cast<std::ptrdiff_t>(p.query->question_end));
    if (behaviour_.wrong_question) {
      const auto other = dns::name_from_text("wrong.question.test");
      question = *other;
      put16(question, p.query->question.qtype);
      put16(question, p.query->question.qclass);
    }
    const bool opt = behaviour_.keepalive.has_value() || behaviour_.response_padding > 0;
    dns::Bytes r;
    std::uint16_t id = p.query->header.id;
    if (behaviour_.wrong_id) id ^= 0x5a5a;
    put16(r, id);
    put16(r, static_cast<std::uint16_t>(0x8000 | (p.query->header.flags & 0x0100) | 0x0080));
    put16(r, 1);
    put16(r, 1);
    put16(r, 0);
    put16(r, opt ? 1 : 0);
    r.insert(r.end(), question.begin(), question.end());
    // Answer: pointer to the question name, A IN, TTL 60, 192.0.2.1.
    put16(r, 0xC00C);
    put16(r, 1);
    put16(r, 1);
    put16(r, 0);
    put16(r, 60);
    put16(r, 4);
    r.insert(r.end(), {192, 0, 2, 1});
    if (opt) {
      dns::Bytes rdata;
      if (behaviour_.keepalive) {
        put16(rdata, dns::opt_tcp_keepalive);
        put16(rdata, 2);
        put16(rdata, *behaviour_.keepalive);
      }
      if (behaviour_.response_padding > 0) {
        put16(rdata, dns::opt_padding);
        put16(rdata, static_cast<std::uint16_t>(behaviour_.response_padding));
        rdata.insert(rdata.end(), behaviour_.response_padding, 0);
      }
      r.push_back(0);  // root owner
      put16(r, dns::type_opt);
      put16(r, 1232);
      put16(r, 0);
      put16(r, 0);
      put16(r, static_cast<std::uint16_t>(rdata.size()));
      r.insert(r.end(), rdata.begin(), rdata.end());
    }
    return r;
  }

  void close_conn(Conn& c, bool notify) {
    if (!c.open) return;
    c.open = false;
    if (notify && c.established) (void)mbedtls_ssl_close_notify(&c.ssl);
    c.read_ev.reset();
    c.write_ev.reset();
    c.write_armed = false;
    c.fd.reset();
    if (c.ssl_live) {
      mbedtls_ssl_free(&c.ssl);
      c.ssl_live = false;
    }
  }

  event_base* base_;
  Behaviour behaviour_;
  TestRng rng_;
  PkKey key_;
  mbedtls_x509_crt cert_;
  std::vector<int> ciphersuites_;
  mbedtls_ssl_config conf_;
#if defined(MBEDTLS_SSL_TICKET_C)
  mbedtls_ssl_ticket_context ticket_;
#endif
  loop::UniqueFd listen_fd_;
  loop::EventPtr accept_ev_;
  std::uint16_t port_ = 0;
  std::vector<std::unique_ptr<Conn>> conns_;
  std::vector<Query> queries_;
  std::size_t accepts_ = 0;
  std::size_t answers_ = 0;
  std::size_t swallowed_ = 0;
  std::size_t closed_by_client_ = 0;
  std::size_t close_notify_from_client_ = 0;
  bool outage_ = false;
};

}  // namespace nxdns::test
