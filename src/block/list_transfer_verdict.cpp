#include "block/list_transfer_verdict.hpp"

#include "log/log.hpp"

namespace nxdns::block {

namespace {

TransferVerdict failed(std::string why) { return {FetchOutcome::failed, std::move(why)}; }

bool is_redirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// curl's own words when it has them (they name the host at most, never the
// path), else its code's text. The caller gives curl's text, not the URL.
std::string curl_words(const TransferFacts& f) {
  return f.curl_error.empty() ? log::cat("curl error ", static_cast<int>(f.code)) : f.curl_error;
}

std::string transfer_error(const TransferFacts& f) {
  switch (f.code) {
    case CURLE_OPERATION_TIMEDOUT:
      return log::cat("timed out (", curl_words(f), ")");
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return log::cat("the connection broke before the whole list arrived (", f.received, " octets received: ",
                      curl_words(f), ")");
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CONNECT_ERROR:
      return log::cat("TLS failed, the server's certificate was not accepted or the handshake broke (",
                      curl_words(f), ")");
    case CURLE_COULDNT_CONNECT:
      return log::cat("cannot connect (", curl_words(f), ")");
    default:
      return log::cat("transfer failed (", curl_words(f), ")");
  }
}

}  // namespace

TransferVerdict judge_transfer(const TransferFacts& f) {
  if (f.stopped) return failed("stopped: the daemon is shutting down");
  if (!f.write_error.empty()) return failed(log::cat("cannot write the copy: ", f.write_error));
  const long s = f.http_status;
  if (is_redirect(s)) {
    return failed(log::cat("HTTP status ", s, ", redirected to ", f.location.empty() ? "an unusable URL" : f.location,
                           "; redirects are not followed: configure the list's final URL"));
  }
  if (s != 0 && s != 200 && s != 304) return failed(log::cat("HTTP status ", s));
  if (f.over_limit || f.code == CURLE_FILESIZE_EXCEEDED) {
    return failed(log::cat("larger than ", f.max_bytes, " octets, the size limit"));
  }
  if (f.code != CURLE_OK) return failed(transfer_error(f));
  if (s == 304) {
    if (!f.conditional) return failed("HTTP status 304 to a request that asked for the whole list");
    return {FetchOutcome::not_modified, "not modified"};
  }
  if (s != 200) return failed("no HTTP response");
  if (f.content_length >= 0 && f.received != static_cast<std::uint64_t>(f.content_length)) {
    return failed(log::cat("the body has ", f.received, " octets where Content-Length said ", f.content_length));
  }
  return {FetchOutcome::updated, log::cat("updated, ", f.received, " octets")};
}

}  // namespace nxdns::block
