#include "stack/tcp/state.hh"

namespace affine::stack::tcp {

std::string_view to_string(tcp_state s) {
  switch (s) {
    case tcp_state::closed: return "CLOSED";
    case tcp_state::listen: return "LISTEN";
    case tcp_state::syn_sent: return "SYN-SENT";
    case tcp_state::syn_received: return "SYN-RECEIVED";
    case tcp_state::established: return "ESTABLISHED";
    case tcp_state::fin_wait_1: return "FIN-WAIT-1";
    case tcp_state::fin_wait_2: return "FIN-WAIT-2";
    case tcp_state::close_wait: return "CLOSE-WAIT";
    case tcp_state::closing: return "CLOSING";
    case tcp_state::last_ack: return "LAST-ACK";
    case tcp_state::time_wait: return "TIME-WAIT";
  }
  return "?";
}

std::string_view to_string(end_reason r) {
  switch (r) {
    case end_reason::open: return "open";
    case end_reason::orderly: return "orderly";
    case end_reason::handshake_failed: return "handshake_failed";
    case end_reason::refused: return "refused";
    case end_reason::reset_received: return "reset_received";
    case end_reason::aborted: return "aborted";
    case end_reason::unread_data: return "unread_data";
    case end_reason::data_after_close: return "data_after_close";
    case end_reason::linger: return "linger";
    case end_reason::retransmissions: return "retransmissions";
    case end_reason::user_timeout: return "user_timeout";
    case end_reason::persist: return "persist";
    case end_reason::orphan_probes: return "orphan_probes";
    case end_reason::keepalive: return "keepalive";
    case end_reason::fin_wait_2: return "fin_wait_2";
  }
  return "?";
}

std::string_view to_string(drop_reason r) {
  switch (r) {
    case drop_reason::none: return "none";
    case drop_reason::closed: return "closed";
    case drop_reason::listen_rst: return "listen_rst";
    case drop_reason::listen_ack: return "listen_ack";
    case drop_reason::listen_no_syn: return "listen_no_syn";
    case drop_reason::syn_queue_full: return "syn_queue_full";
    case drop_reason::accept_queue_full: return "accept_queue_full";
    case drop_reason::syn_cookie_invalid: return "syn_cookie_invalid";
    case drop_reason::unacceptable_ack: return "unacceptable_ack";
    case drop_reason::syn_sent_no_syn: return "syn_sent_no_syn";
    case drop_reason::rst_unacceptable: return "rst_unacceptable";
    case drop_reason::paws: return "paws";
    case drop_reason::timestamp_missing: return "timestamp_missing";
    case drop_reason::out_of_window: return "out_of_window";
    case drop_reason::syn_in_window: return "syn_in_window";
    case drop_reason::no_ack: return "no_ack";
    case drop_reason::ack_of_unsent: return "ack_of_unsent";
    case drop_reason::data_after_close: return "data_after_close";
    case drop_reason::rst_challenged: return "rst_challenged";
    case drop_reason::syn_challenged: return "syn_challenged";
    case drop_reason::ack_too_old: return "ack_too_old";
  }
  return "?";
}

}  // namespace affine::stack::tcp
