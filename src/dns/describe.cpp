// Log wording of the codec's error enums.
#include "dns/message.hpp"

namespace nxdns::dns {

const char* describe(ParseError e) {
  switch (e) {
    case ParseError::none: return "ok";
    case ParseError::too_short: return "shorter than a DNS header";
    case ParseError::not_a_query: return "QR set on a query";
    case ParseError::bad_opcode: return "opcode is not QUERY";
    case ParseError::bad_question_count: return "question count is not 1";
    case ParseError::truncated: return "field runs past the end of the packet";
    case ParseError::label_too_long: return "label longer than 63 octets (or extended label type)";
    case ParseError::name_too_long: return "name longer than 255 octets";
    case ParseError::bad_pointer: return "bad compression pointer";
    case ParseError::bad_label_type: return "reserved label type";
    case ParseError::bad_opt: return "malformed or repeated OPT record";
    case ParseError::trailing_garbage: return "bytes after the last record";
    case ParseError::unexpected_records: return "query carries answer or authority records";
    case ParseError::too_large: return "query longer than 4096 octets";
  }
  return "unknown parse error";
}

const char* describe(ResponseError e) {
  switch (e) {
    case ResponseError::none: return "ok";
    case ResponseError::too_short: return "response shorter than a DNS header";
    case ResponseError::not_a_response: return "QR clear in response";
    case ResponseError::id_mismatch: return "response ID does not match the query";
    case ResponseError::bad_question_count: return "response question count is not 1";
    case ResponseError::question_mismatch: return "response question differs from the query";
    case ResponseError::malformed: return "response question is malformed";
  }
  return "unknown response error";
}

}  // namespace nxdns::dns
