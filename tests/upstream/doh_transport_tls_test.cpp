// DohTransport's TLS 1.2 cipher suite policy on the wire, the DoT rule
// (tls_ciphersuites.hpp): nghttpx in front of the --plain fixture accepts
// one OpenSSL suite and TLS 1.2 at most, over HTTP/1.1 (HTTP/2 would refuse
// a CBC suite itself, RFC 9113 §9.2.2, and hide the client's offer). A suite
// without an AEAD cipher (the test PKI's keys are ECDSA, so CBC stands in
// for every forbidden kind) fails the handshake; an allowed one answers, on
// the same proxy setup (the control that shows the refusal is the suite's).
#include <string>
#include <vector>

#include "log/log.hpp"
#include "upstream/doh_transport_fixture.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using upstream::Cause;
using upstream::ExchangeResult;

TEST_GROUP_BASE(DohTransportTls, test::DohTransportFixture) {
  // A TLS 1.2-only HTTP/1.1 front offering `suite` alone.
  std::uint16_t tls12_front(const std::string& suite) {
    const auto backend = start_fixture({}, true);
    return start_h2_front(backend, {"--ciphers=" + suite, "--tls-max-proto-version=TLSv1.2", "--npn-list=http/1.1"});
  }
};

TEST(DohTransportTls, Tls12SuitesWithoutAeadAreNotOffered) {
  REQUIRE_FIXTURES();
  REQUIRE_NGHTTPX();
  for (const char* suite : {"ECDHE-ECDSA-AES128-SHA256", "ECDHE-ECDSA-AES256-SHA"}) {
    const auto port = tls12_front(suite);
    make_transport(options(port));
    const ExchangeResult r = exchange(0x5252, "cbc.example");
    if (r.cause != Cause::handshake_failed || r.detail.find("handshake failure") == std::string::npos) {
      FAIL(log::cat(suite, ": want handshake_failed naming the alert, got ", upstream::describe(r.cause), ": ",
                    r.detail)
               .c_str());
    }
    doh.reset();
    front->stop();
    fixture->stop();
  }
}

TEST(DohTransportTls, EcdheWithAeadIsOfferedOnTls12) {
  REQUIRE_FIXTURES();
  REQUIRE_NGHTTPX();
  for (const char* suite : {"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
                            "ECDHE-ECDSA-CHACHA20-POLY1305"}) {
    const auto port = tls12_front(suite);
    make_transport(options(port));
    exchange_ok(0x5353, "aead.example");
    CHECK_EQUAL(std::string("TLSv1.2"), doh->stats().tls_version);
    doh.reset();
    front->stop();
    fixture->stop();
  }
}
