#include "upstream/certificate_time.hpp"

#include <mbedtls/x509.h>

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using upstream::Cause;

TEST_GROUP(CertificateTime){};

// Only "not yet valid" is the clock's fault; anything else with it is a
// certificate problem that setting the clock would not cure.
TEST(CertificateTime, MbedtlsFlagsTable) {
  struct Row {
    std::uint32_t flags;
    Cause cause;
  };
  const Row rows[] = {
      {MBEDTLS_X509_BADCERT_FUTURE, Cause::certificate_clock_behind},
      {MBEDTLS_X509_BADCRL_FUTURE, Cause::certificate_clock_behind},
      {MBEDTLS_X509_BADCERT_FUTURE | MBEDTLS_X509_BADCRL_FUTURE, Cause::certificate_clock_behind},
      {MBEDTLS_X509_BADCERT_FUTURE | MBEDTLS_X509_BADCERT_CN_MISMATCH, Cause::certificate},
      {MBEDTLS_X509_BADCERT_FUTURE | MBEDTLS_X509_BADCERT_NOT_TRUSTED, Cause::certificate},
      {MBEDTLS_X509_BADCERT_EXPIRED, Cause::certificate},
      {MBEDTLS_X509_BADCERT_CN_MISMATCH, Cause::certificate},
      {MBEDTLS_X509_BADCERT_NOT_TRUSTED, Cause::certificate},
      {0, Cause::certificate},                              // failed, but no flag says why
      {static_cast<std::uint32_t>(-1), Cause::certificate},  // no verification result at all
  };
  for (const auto& r : rows) {
    LONGS_EQUAL(static_cast<int>(r.cause), static_cast<int>(upstream::certificate_cause_from_mbedtls_flags(r.flags)));
  }
}

TEST(CertificateTime, OpensslVerifyResultTable) {
  struct Row {
    long result;
    Cause cause;
  };
  const Row rows[] = {
      {9, Cause::certificate_clock_behind},   // X509_V_ERR_CERT_NOT_YET_VALID
      {11, Cause::certificate_clock_behind},  // X509_V_ERR_CRL_NOT_YET_VALID
      {10, Cause::certificate},               // X509_V_ERR_CERT_HAS_EXPIRED
      {20, Cause::certificate},               // X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
      {62, Cause::certificate},               // X509_V_ERR_HOSTNAME_MISMATCH
      {0, Cause::certificate},                // unknown / backend did not say
  };
  for (const auto& r : rows) {
    LONGS_EQUAL(static_cast<int>(r.cause), static_cast<int>(upstream::certificate_cause_from_openssl_result(r.result)));
  }
}

TEST(CertificateTime, DetailNamesTheClock) {
  const std::string d = upstream::not_yet_valid_detail();
  CHECK(d.find("not yet valid") != std::string::npos);
  CHECK(d.find("clock is behind its notBefore") != std::string::npos);
  CHECK(d.find("is the clock set?") != std::string::npos);
}

TEST(CertificateTime, CauseHasItsOwnLabel) {
  STRCMP_EQUAL("certificate_clock_behind", upstream::describe(Cause::certificate_clock_behind));
}
