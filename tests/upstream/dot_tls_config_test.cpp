// The per-upstream TLS client configuration: where trust anchors come from
// and how a bad source fails (clearly, naming the file, without throwing).
#include "upstream/tls_config.hpp"

#include <mbedtls/version.h>

#include <unistd.h>

#include <cstdint>
#include <string>

#include "upstream/dot_test_server.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::upstream::TlsClientConfig;

TEST_GROUP(DotTlsConfig){};

TEST(DotTlsConfig, LoadsAConfiguredCaFile) {
  nxdns::test::TestPki pki("dot.test");
  nxdns::test::TempFile ca(pki.ca_pem + pki.cert_pem);  // a bundle of two
  std::string err;
  auto cfg = TlsClientConfig::create(ca.path(), &err);
  CHECK_TRUE(cfg != nullptr);
  LONGS_EQUAL(2, cfg->ca_count());
  CHECK_TRUE(cfg->ca_source().find(ca.path()) != std::string::npos);
  // Wire IDs come from its DRBG: not constant.
  std::uint16_t first = 0;
  CHECK_TRUE(cfg->random(&first, sizeof first));
  bool varied = false;
  for (int i = 0; i < 8 && !varied; ++i) {
    std::uint16_t v = 0;
    CHECK_TRUE(cfg->random(&v, sizeof v));
    varied = v != first;
  }
  CHECK_TRUE(varied);
}

TEST(DotTlsConfig, SystemTrustStoreIsTheDefault) {
  std::string err;
  auto cfg = TlsClientConfig::create(std::nullopt, &err);
  if (::access(nxdns::upstream::system_ca_bundle, R_OK) == 0) {
    CHECK_TRUE(cfg != nullptr);
    CHECK_TRUE(cfg->ca_count() > 0);
    CHECK_TRUE(cfg->ca_source().find("system trust store") != std::string::npos);
  } else {
    // No bundle on this machine: the failure must say which file.
    CHECK_TRUE(cfg == nullptr);
    CHECK_TRUE(err.find(nxdns::upstream::system_ca_bundle) != std::string::npos);
  }
}

TEST(DotTlsConfig, MissingCaFileFailsNamingIt) {
  std::string err;
  auto cfg = TlsClientConfig::create(std::string("/nonexistent/dir/ca.pem"), &err);
  CHECK_TRUE(cfg == nullptr);
  CHECK_TRUE(err.find("/nonexistent/dir/ca.pem") != std::string::npos);
  CHECK_TRUE(err.find("missing or unreadable") != std::string::npos);
}

TEST(DotTlsConfig, GarbageCaFileFails) {
  nxdns::test::TempFile junk("-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n");
  std::string err;
  auto cfg = TlsClientConfig::create(junk.path(), &err);
  CHECK_TRUE(cfg == nullptr);
  CHECK_TRUE(err.find(junk.path()) != std::string::npos);
}

TEST(DotTlsConfig, ReportsTheLinkedLibrary) {
  const std::string v = nxdns::upstream::tls_library_version();
  CHECK_TRUE(v.find("TLS") != std::string::npos);
  CHECK_TRUE(v.find(nxdns::upstream::tls13_available() ? "3." : "2.") != std::string::npos);
}

#if MBEDTLS_VERSION_MAJOR >= 3
// The TLS 1.3 client sends a key share for the first group only, so the
// order decides the ECDHE it computes: the one this mbedTLS build does
// cheaper first (X25519 with Everest, else P-256), then the other, P-384.
TEST(DotTlsConfig, OffersTheCheapestKeyShareGroupFirst) {
  nxdns::test::TestPki pki("dot.test");
  nxdns::test::TempFile ca(pki.ca_pem);
  std::string err;
  auto cfg = TlsClientConfig::create(ca.path(), &err);
  CHECK_TRUE(cfg != nullptr);
  const std::uint16_t* groups = cfg->ssl_config()->MBEDTLS_PRIVATE(group_list);
  CHECK_TRUE(groups != nullptr);
#if defined(MBEDTLS_ECDH_VARIANT_EVEREST_ENABLED)
  LONGS_EQUAL(MBEDTLS_SSL_IANA_TLS_GROUP_X25519, groups[0]);
  LONGS_EQUAL(MBEDTLS_SSL_IANA_TLS_GROUP_SECP256R1, groups[1]);
#else
  LONGS_EQUAL(MBEDTLS_SSL_IANA_TLS_GROUP_SECP256R1, groups[0]);
  LONGS_EQUAL(MBEDTLS_SSL_IANA_TLS_GROUP_X25519, groups[1]);
#endif
  LONGS_EQUAL(MBEDTLS_SSL_IANA_TLS_GROUP_SECP384R1, groups[2]);
  LONGS_EQUAL(MBEDTLS_SSL_IANA_TLS_GROUP_NONE, groups[3]);
}
#endif
