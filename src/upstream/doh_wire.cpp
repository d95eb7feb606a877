#include "upstream/doh_wire.hpp"

namespace nxdns::upstream {

std::string base64url_encode(dns::ByteView data) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  out.reserve((data.size() * 4 + 2) / 3);
  std::size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t{data[i]} << 16) | (std::uint32_t{data[i + 1]} << 8) | data[i + 2];
    out.push_back(alphabet[(v >> 18) & 63]);
    out.push_back(alphabet[(v >> 12) & 63]);
    out.push_back(alphabet[(v >> 6) & 63]);
    out.push_back(alphabet[v & 63]);
  }
  const std::size_t rest = data.size() - i;
  if (rest == 1) {
    const std::uint32_t v = std::uint32_t{data[i]} << 16;
    out.push_back(alphabet[(v >> 18) & 63]);
    out.push_back(alphabet[(v >> 12) & 63]);
  } else if (rest == 2) {
    const std::uint32_t v = (std::uint32_t{data[i]} << 16) | (std::uint32_t{data[i + 1]} << 8);
    out.push_back(alphabet[(v >> 18) & 63]);
    out.push_back(alphabet[(v >> 12) & 63]);
    out.push_back(alphabet[(v >> 6) & 63]);
  }
  return out;
}

std::string doh_base_url(const std::string& tls_name, std::uint16_t port, const std::string& path) {
  std::string url = "https://" + tls_name + ":" + std::to_string(port);
  if (path.empty() || path.front() != '/') url += '/';
  url += path;
  return url;
}

std::string doh_get_url(const std::string& base_url, dns::ByteView wire) {
  std::string url = base_url;
  url += base_url.find('?') == std::string::npos ? "?dns=" : "&dns=";
  url += base64url_encode(wire);
  return url;
}

std::string doh_resolve_entry(const std::string& tls_name, const net::Endpoint& address) {
  std::string host = address.host_string();
  if (address.family() == AF_INET6) host = "[" + host + "]";
  return tls_name + ":" + std::to_string(address.port()) + ":" + host;
}

namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool is_ows(char c) { return c == ' ' || c == '\t'; }

}  // namespace

bool is_dns_message_type(const char* content_type) {
  if (!content_type) return false;
  std::string_view v(content_type);
  while (!v.empty() && is_ows(v.front())) v.remove_prefix(1);
  const std::size_t semi = v.find(';');
  std::string_view media = v.substr(0, semi);
  while (!media.empty() && is_ows(media.back())) media.remove_suffix(1);
  if (media.size() != doh_media_type.size()) return false;
  for (std::size_t i = 0; i < media.size(); ++i) {
    if (lower(media[i]) != doh_media_type[i]) return false;
  }
  return true;
}

std::string sanitize_header_value(std::string_view v) {
  constexpr std::size_t max = 64;
  std::string out;
  for (char c : v.substr(0, max)) out.push_back((c >= 0x20 && c < 0x7f) ? c : '?');
  if (v.size() > max) out += "...";
  return out;
}

Cause cause_of_curl_error(CURLcode rc, bool connected) {
  switch (rc) {
    case CURLE_OK:
      return Cause::ok;
    // Dialing. A resolve failure cannot happen with the pinned address (the
    // resolve entry is permanent); if it ever did, it is a dial failure too.
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return Cause::connect_failed;
    case CURLE_OPERATION_TIMEDOUT:
      return connected ? Cause::attempt_timeout : Cause::connect_failed;
    case CURLE_SSL_CONNECT_ERROR:
      return Cause::handshake_failed;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
      return Cause::certificate;
    // The connection ended under the exchange.
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
      return Cause::eof;
    case CURLE_RECV_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return Cause::connection_reset;
    case CURLE_SEND_ERROR:
      return Cause::broken_pipe;
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_CIPHER:
    case CURLE_USE_SSL_FAILED:
      return Cause::tls_protocol;
    // The peer sent something that is not an answer.
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_BAD_CONTENT_ENCODING:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_TOO_MANY_REDIRECTS:
      return Cause::bad_response;
    case CURLE_FILESIZE_EXCEEDED:
      return Cause::response_too_large;
    case CURLE_OUT_OF_MEMORY:
    case CURLE_FAILED_INIT:
      return Cause::local_resource;
    case CURLE_NO_CONNECTION_AVAILABLE:
    case CURLE_SEND_FAIL_REWIND:
    case CURLE_READ_ERROR:
    case CURLE_RECURSIVE_API_CALL:
#if LIBCURL_VERSION_NUM >= 0x075900
    case CURLE_UNRECOVERABLE_POLL:
#endif
      return Cause::local_resource;
    case CURLE_ABORTED_BY_CALLBACK:
      return Cause::cancelled;
    default:
      // Unclassified: final. Only the codes above that say the connection
      // ended under the transfer may earn the one retry (retry_decision).
      return Cause::bad_response;
  }
}

}  // namespace nxdns::upstream
