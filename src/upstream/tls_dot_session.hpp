#pragma once
// One DNS-over-TLS connection (RFC 7858) driven by libevent readiness: a
// non-blocking TCP socket, an mbedtls_ssl_context over the tls_bio callbacks,
// RFC 7766 two-byte framing, and pipelining (RFC 7858 §3.3): several queries
// outstanding at once, each response matched by ID and validated against the
// question it answers, in whatever order the server sends them.
//
// It never calls user code: what it learns goes to its Listener (the
// transport), which defers completions to the loop.
#include <mbedtls/ssl.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "dns/message.hpp"
#include "dns/stream_message.hpp"
#include "loop/event_handles.hpp"
#include "loop/life_token.hpp"
#include "loop/scheduler.hpp"
#include "net/endpoint.hpp"
#include "upstream/budgets.hpp"
#include "upstream/dot_session.hpp"
#include "upstream/handshake_pacer.hpp"
#include "upstream/pipelining_detector.hpp"
#include "upstream/tls_bio.hpp"
#include "upstream/tls_config.hpp"
#include "upstream/transport.hpp"

namespace nxdns::upstream {

struct DotSessionParams {
  net::Endpoint address;
  std::string tls_name;  // SNI and the name the certificate must carry
  std::chrono::milliseconds dial_timeout = default_dial_timeout;  // connect + handshake
  std::chrono::milliseconds idle_timeout = default_session_idle_timeout;
  // Shared by the upstream's sessions: their expensive handshake steps (the
  // ClientHello's key share, the server flight's key agreement and
  // certificate checks) take one loop turn each (handshake_pacer.hpp).
  // Null: every step runs when its event fires.
  HandshakePacer* pacer = nullptr;
};

class TlsDotSession final : public DotSession, private HandshakePacer::Stepper {
 public:
  TlsDotSession(event_base* base, loop::Scheduler& sched, TlsClientConfig& tls, const DotSessionParams& params,
                Listener& listener, std::size_t index);
  ~TlsDotSession() override;  // closes quietly (close_notify if established), no callbacks

  void dial() override;
  void enqueue(ExchangeId id, std::uint16_t wire_id, dns::StreamMessage wire_query) override;
  Withdraw withdraw(ExchangeId id) override;
  SessionEnd close(Cause cause, std::string detail, bool send_close_notify) override;

  SessionState state() const override { return state_; }
  std::size_t load() const override { return queued_.size() + outstanding_.size(); }
  bool wire_id_in_use(std::uint16_t wire_id) const override;
  bool partial_frame_pending() const override { return rbuf_.size() > roff_; }
  const std::string& tls_version() const override { return tls_version_; }
  std::uint64_t responses() const override { return responses_; }
  std::uint64_t tickets_received() const override { return tickets_received_; }  // 3.x only
  std::size_t index() const override { return index_; }
  std::uint64_t dial_count() const override { return dial_count_; }
  const AnswerTiming& last_answer_timing() const override { return last_answer_timing_; }
  std::vector<Unanswered> unanswered() const override;
  std::optional<loop::TimePoint> last_answer_at() const override { return last_answer_at_; }
  loop::TimePoint dialed_at() const override { return dialed_at_; }
  std::optional<loop::TimePoint> established_at() const override { return established_at_; }
  std::optional<loop::TimePoint> newest_answered_written() const override { return newest_answered_written_; }
  void set_max_outstanding(std::size_t n) override { max_outstanding_ = n == 0 ? 1 : n; }
  std::optional<std::uint16_t> server_keepalive() const override { return server_keepalive_; }

  // The ClientHello was built while the TCP connect was under way and waits
  // in mbedTLS's output buffer for the connect to complete (see dial()).
  bool client_hello_waiting() const { return bio_.hold_output != 0; }
  // The ticket store this slot shares with the upstream's other slots is
  // keyed by this.
  TlsPeerIdentity peer_identity() const;
  // How long this session may sit idle before we close it.
  std::chrono::milliseconds idle_limit() const;

 private:
  struct Queued {
    ExchangeId id;
    std::uint16_t wire_id;
    dns::StreamMessage query;
  };
  struct Outstanding {
    ExchangeId id;
    dns::Bytes query;  // kept to validate the response's question
    loop::TimePoint written_at;
    std::uint64_t seq;  // write order on this connection, from 1
  };

  // The handshake step waiting for its turn, if any.
  enum class PacedStep : std::uint8_t { none, client_hello, server_flight };

  static void on_event(evutil_socket_t fd, short what, void* arg);
  // True: do `step` now. False: it waits in the pacer's line (recorded in
  // paced_) and on_handshake_turn() does it.
  bool handshake_turn(PacedStep step);
  void on_handshake_turn() override;
  bool start_client_hello();
  // What is left of the handshake needs no public-key arithmetic.
  bool handshake_step_is_cheap() const;
  template <class F>
  void guarded(F&& fn) noexcept;
  void handle(short what);
  void finish_connect();
  bool step_handshake();
  bool pump();
  bool flush_writes();
  bool read_available();
  bool take_frames();
  bool handle_frame(dns::ByteView frame);
  void set_write_interest(bool on);
  void after_activity();
  void on_idle();
  void fail(Cause cause, std::string detail, std::optional<ExchangeId> culprit = std::nullopt);
  void fail_tls(int ret, TlsPhase phase);
  std::string certificate_detail() const;
  void deferred_failure(Cause cause, std::string detail);
  bool build_client_hello();
  void offer_ticket();
  void handshake_done();
  void keep_ticket();

  event_base* base_;
  loop::Scheduler& sched_;
  TlsClientConfig& tls_;
  DotSessionParams params_;
  Listener& listener_;
  std::size_t index_;

  SessionState state_ = SessionState::closed;
  // Revoked by every close: a handler that called out (listener, fail)
  // watches it to know the connection it was working on is gone, even if
  // the slot was dialed again meanwhile (a new term) or the session itself
  // was destroyed.
  loop::LifeToken connection_;
  loop::UniqueFd fd_;
  loop::EventPtr read_ev_;
  loop::EventPtr write_ev_;
  bool write_armed_ = false;
  bool ssl_live_ = false;
  mbedtls_ssl_context ssl_;
  nxdns_tls_bio bio_{-1, 0, 0, 0};
  loop::Timer dial_timer_;
  loop::Timer idle_timer_;
  PacedStep paced_ = PacedStep::none;

  std::deque<Queued> queued_;  // not yet handed to TLS
  std::unordered_map<std::uint16_t, Outstanding> outstanding_;  // by wire ID
  // Frames handed to TLS as one write; retried with the same bytes on
  // WANT_WRITE as mbedtls_ssl_write requires.
  dns::Bytes wbuf_;
  std::size_t woff_ = 0;
  // Received plaintext not yet split into frames.
  dns::Bytes rbuf_;
  std::size_t roff_ = 0;

  std::string tls_version_;
  std::optional<std::uint16_t> server_keepalive_;
  std::uint64_t responses_ = 0;
  std::uint64_t tickets_received_ = 0;
  // Handshake bookkeeping of the current connection.
  bool ticket_offered_ = false;   // a stored session went into the ClientHello
  bool saw_certificate_ = false;  // the server sent (and we verified) its chain
  loop::TimePoint tls_started_{};
  HandshakeKind handshake_kind_ = HandshakeKind::full;
  std::uint64_t dial_count_ = 0;
  loop::TimePoint dialed_at_{};
  std::optional<loop::TimePoint> established_at_;
  // Answer timing for placement's pipelining detector (reset by dial()).
  std::uint64_t next_write_seq_ = 1;
  std::optional<loop::TimePoint> newest_answered_written_;
  std::size_t max_outstanding_ = SIZE_MAX;
  std::optional<loop::TimePoint> last_answer_at_;
  std::optional<loop::TimePoint> last_answered_written_;  // when the last answer's query went out
  bool reordered_ = false;  // this connection answered out of order at least once
  AnswerTiming last_answer_timing_;
};

}  // namespace nxdns::upstream
