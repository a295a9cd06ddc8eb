// SIGINT and SIGTERM as a stop request (runtime/signal_stop.hh): the first
// requests the stop; a second SIGTERM changes nothing (timeout(1) sends two
// at once, to the child and to its process group); a second SIGINT half a
// second later ends the process the default way (Ctrl-C again).

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "runtime/signal_stop.hh"

namespace affine::test {
namespace {

using namespace std::chrono_literals;

bool stop_within_5s(const detail::signal_stop& s) {
  for (int i = 0; i < 500 && !s.token().stop_requested(); ++i) std::this_thread::sleep_for(10ms);
  return s.token().stop_requested();
}

TEST(signal_stop, TheFirstSignalRequestsTheStop) {
  detail::signal_stop s;
  EXPECT_FALSE(s.token().stop_requested());
  ::kill(::getpid(), SIGTERM);
  EXPECT_TRUE(stop_within_5s(s));
}

TEST(signal_stop_death, ASecondSigtermChangesNothing) {
  EXPECT_EXIT(
      {
        detail::signal_stop s;
        ::kill(::getpid(), SIGTERM);
        if (!stop_within_5s(s)) std::_Exit(2);
        std::this_thread::sleep_for(600ms);
        ::kill(::getpid(), SIGTERM);
        std::this_thread::sleep_for(300ms);
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(signal_stop_death, ASecondSigintAMomentLaterEndsTheProcess) {
  EXPECT_EXIT(
      {
        detail::signal_stop s;
        ::kill(::getpid(), SIGINT);
        if (!stop_within_5s(s)) std::_Exit(2);
        std::this_thread::sleep_for(600ms);
        ::kill(::getpid(), SIGINT);
        std::this_thread::sleep_for(5s);
        std::_Exit(0);
      },
      ::testing::KilledBySignal(SIGINT), "");
}

}  // namespace
}  // namespace affine::test
