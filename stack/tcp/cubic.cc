#include "stack/tcp/cubic.hh"

#include <algorithm>
#include <cmath>

namespace affine::stack::tcp {

void cubic::init(std::uint32_t mss, std::uint64_t now_ns) {
  loss_based::init(mss, now_ns);
  hystart_.reset();
  w_max_ = k_ = cwnd_prior_ = w_est_ = growth_credit_ = 0;
  epoch_open_ = after_timeout_ = false;
}

double cubic::w_cubic(double t) const { return c * std::pow(t - k_, 3) + w_max_; }

// RFC 9438 4.6 (multiplicative decrease) and 4.7 (fast convergence), on
// cwnd as Linux does: the RFC allows FlightSize, which shrinks an
// application-limited flow's window far more than its share.
std::uint32_t cubic::reduced_ssthresh(std::uint32_t, loss kind) {
  const double cwnd = segments();
  // 4.7: a flow whose window fell short of the last W_max releases bandwidth
  // for newcomers: W_max = cwnd * (1 + beta) / 2.
  w_max_ = cwnd < w_max_ ? cwnd * (1 + beta) / 2 : cwnd;
  cwnd_prior_ = cwnd;
  epoch_open_ = false;
  growth_credit_ = 0;
  // 4.8: after a timeout the next epoch starts with K = 0 and W_max at cwnd.
  after_timeout_ = kind == loss::timeout;
  hystart_.on_loss();
  return saturate_window(std::uint64_t(double(cwnd_) * beta));
}

void cubic::slow_start(const ack_sample& a) {
  add_to_cwnd(hystart_.on_ack(a, mss_));
  if (hystart_.current() == hystart::phase::done && ssthresh_ == UINT32_MAX) ssthresh_ = cwnd_;
}

// RFC 9438 4.2: "t" is measured from the start of the congestion-avoidance
// stage; cwnd_epoch is the window then.
void cubic::begin_epoch(std::uint64_t now_ns) {
  epoch_open_ = true;
  epoch_start_ns_ = now_ns;
  const double cwnd_epoch = segments();
  if (after_timeout_ || w_max_ <= cwnd_epoch) {
    // No loss yet, or the first epoch after an RTO (4.8): the curve starts
    // at its plateau, convex from here.
    w_max_ = cwnd_epoch;
    k_ = 0;
  } else {
    k_ = std::cbrt((w_max_ - cwnd_epoch) / c);  // eq. 2
  }
  after_timeout_ = false;
  w_est_ = cwnd_epoch;  // 4.3: "W_est is set equal to cwnd_epoch at the start of the epoch"
}

void cubic::congestion_avoidance(const ack_sample& a) {
  if (!epoch_open_) begin_epoch(a.now_ns);
  const double cwnd = segments();
  const double acked = double(a.bytes_acked) / mss_;
  // 4.3: W_est += alpha_cubic * segments_acked / cwnd; alpha_cubic becomes 1
  // once W_est reaches cwnd_prior (Reno's own slope past the last loss).
  w_est_ += (w_est_ >= cwnd_prior_ ? 1.0 : alpha) * acked / cwnd;
  const double t = double(a.now_ns - epoch_start_ns_) / 1e9;
  if (w_cubic(t) < w_est_) {
    // 4.3, the Reno-friendly region: "cwnd SHOULD be set to W_est" (never
    // shrinking what the cubic curve already gave).
    if (w_est_ > cwnd) add_to_cwnd(std::uint64_t((w_est_ - cwnd) * mss_));
    return;
  }
  // 4.4 and 4.5, concave and convex regions: aim at W_cubic(t + RTT),
  // clamped to [cwnd, 1.5 * cwnd], growing by (target - cwnd) / cwnd per
  // segment acknowledged.
  const double rtt = double(a.srtt_ns) / 1e9;
  const double target = std::clamp(w_cubic(t + rtt), cwnd, 1.5 * cwnd);
  growth_credit_ += (target - cwnd) / cwnd * double(a.bytes_acked);
  const double whole = std::floor(growth_credit_);
  growth_credit_ -= whole;
  add_to_cwnd(std::uint64_t(whole));
}

// RFC 9438 5.8: the curve must not run on while the flow sends nothing;
// the epoch starts again from the restarted window.
void cubic::on_idle_restart(std::uint64_t now_ns) {
  loss_based::on_idle_restart(now_ns);
  epoch_open_ = false;
}

// RFC 9438 5.8: "t in Eq. 1 MUST NOT include" the periods when the
// application left the window unused, or W_cubic(t) is far ahead when it
// sends again. A quiet spell shorter than the RTO keeps the epoch and
// moves its start by the time nothing was sent (as Linux's
// cubictcp_cwnd_event), never past now.
void cubic::on_send_from_empty(std::uint64_t now_ns, std::uint64_t quiet_ns) {
  if (!epoch_open_) return;
  epoch_start_ns_ = std::min(epoch_start_ns_ + quiet_ns, now_ns);
}

}  // namespace affine::stack::tcp
