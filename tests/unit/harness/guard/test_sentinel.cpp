// harness/guard/sentinel without MPI: a hub and its links in one process over loopback. A link that ends
// without goodbye is a lost rank at once; the hub asks every link what it is doing; an exit order
// reaches every link; a hub that ends without done is rank 0 lost; strangers cannot join. The two-level
// tree (a node leader's hub relaying its node to rank 0) does all of it through the leader.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "harness/guard/sentinel.h"
#include "harness/guard/stop_signal.h"

namespace gpuscale {
namespace {

using namespace std::chrono_literals;

// What the handlers saw, waited for with a deadline. Every wait here returns as soon as its event comes;
// the limits (30 s) only give up on an event that never comes, so a loaded machine cannot break them.
struct Seen {
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::string> events;
  void add(std::string e) {
    std::lock_guard lock(m);
    events.push_back(std::move(e));
    cv.notify_all();
  }
  bool wait_for(std::size_t n, std::chrono::milliseconds limit = 30000ms) {
    std::unique_lock lock(m);
    return cv.wait_for(lock, limit, [&] { return events.size() >= n; });
  }
};

SentinelHandlers handlers(Seen& seen, const std::string& who, Phase phase = Phase::idle) {
  SentinelHandlers h;
  h.rank_lost = [&seen](const PeerIdentity& p, const std::string& how, bool interrupted) {
    seen.add("lost " + std::to_string(p.rank) + " " + p.host + ": " + how + (interrupted ? " (interrupted)" : ""));
  };
  h.root_lost = [&seen, who](const std::string& how, bool interrupted) {
    seen.add(who + " lost root: " + how + (interrupted ? " (interrupted)" : ""));
  };
  h.exit_ordered = [&seen, who](int code) { seen.add(who + " exit " + std::to_string(code)); };
  // Each rank's steps and idle seconds say who answered: "r3" has made 3 steps, its last 30 s ago.
  const std::uint64_t steps = who.size() > 1 && who[0] == 'r' ? static_cast<std::uint64_t>(who[1] - '0') : 0;
  h.activity = [phase, who, steps] { return ActivitySnapshot{phase, who + " doing", steps, 10.0 * steps}; };
  return h;
}

const std::vector<std::string> kLoopback = {"127.0.0.1"};

TEST(Sentinel, LineBuffer) {
  LineBuffer b;
  EXPECT_TRUE(b.feed("ab", 2).empty());
  EXPECT_EQ(b.feed("c\nde\nf", 6), (std::vector<std::string>{"abc", "de"}));
  EXPECT_EQ(b.feed("\n", 1), (std::vector<std::string>{"f"}));
  const std::string big(LineBuffer::kMaxLine + 1, 'x');
  EXPECT_THROW(b.feed(big.data(), big.size()), std::length_error);
}

TEST(Sentinel, LostRankIsNoticedAtOnce) {
  Seen seen;
  SentinelHub hub(3, "tok", {0, "node-a", 100}, handlers(seen, "hub"));
  auto one = std::make_unique<SentinelLink>(kLoopback, hub.port(), "tok", PeerIdentity{1, "node-a", 101}, handlers(seen, "r1"));
  auto two = std::make_unique<SentinelLink>(kLoopback, hub.port(), "tok", PeerIdentity{2, "node-b", 102}, handlers(seen, "r2"));
  EXPECT_TRUE(hub.wait_for_hello({1, 2}, 30).empty());
  hub.arm();
  one->arm();
  two->arm();
  EXPECT_EQ(hub.peers()[2].host, "node-b");
  EXPECT_EQ(hub.peers()[2].pid, 102);
  // Rank 2's socket closes without goodbye, as when its process dies. At once: the loss is the closed
  // connection itself (the message says so), not a missed heartbeat; no wall-clock bound to break.
  two.reset();
  ASSERT_TRUE(seen.wait_for(1));
  EXPECT_EQ(seen.events[0], "lost 2 node-b: its process ended (connection closed)");
  // One loss ends the run: later closings are not reported again.
  one.reset();
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(seen.events.size(), 1u);
  EXPECT_EQ(lost_rank_message({2, "node-b", 102}, "its process ended"), "rank 2 (node-b, pid 102) was lost: its process ended");
}

TEST(Sentinel, GoodbyeIsNotALoss) {
  Seen seen;
  SentinelHub hub(2, "tok", {0, "a", 1}, handlers(seen, "hub"));
  SentinelLink link(kLoopback, hub.port(), "tok", {1, "a", 2}, handlers(seen, "r1"));
  ASSERT_TRUE(hub.wait_for_hello({1}, 30).empty());
  hub.arm();
  link.arm();
  link.finish();
  hub.finish();
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(seen.events.empty());
}

TEST(Sentinel, AsksEveryRankWhatItIsDoing) {
  Seen seen;
  SentinelHub hub(3, "tok", {0, "a", 1}, handlers(seen, "hub", Phase::collective));
  SentinelLink one(kLoopback, hub.port(), "tok", {1, "a", 2}, handlers(seen, "r1", Phase::computing));
  SentinelLink two(kLoopback, hub.port(), "tok", {2, "b", 3}, handlers(seen, "r2", Phase::waiting));
  ASSERT_TRUE(hub.wait_for_hello({1, 2}, 30).empty());
  hub.arm();
  const auto states = hub.ask_states(30);
  ASSERT_EQ(states.size(), 3u);
  EXPECT_TRUE(states[0].answered && states[1].answered && states[2].answered);
  EXPECT_EQ(states[0].phase, Phase::collective);
  EXPECT_EQ(states[1].phase, Phase::computing);
  EXPECT_EQ(states[1].doing, "r1 doing");
  EXPECT_EQ(states[2].phase, Phase::waiting);
  EXPECT_EQ(states[2].host, "b");
  EXPECT_EQ(states[2].pid, 3);
  one.finish();
  two.finish();
  hub.finish();
}

TEST(Sentinel, ExitOrderReachesEveryRank) {
  Seen seen;
  SentinelHub hub(3, "tok", {0, "a", 1}, handlers(seen, "hub"));
  SentinelLink one(kLoopback, hub.port(), "tok", {1, "a", 2}, handlers(seen, "r1"));
  SentinelLink two(kLoopback, hub.port(), "tok", {2, "a", 3}, handlers(seen, "r2"));
  ASSERT_TRUE(hub.wait_for_hello({1, 2}, 30).empty());
  hub.arm();
  one.arm();
  two.arm();
  hub.order_exit(5, 0.5);  // the links here do not exit, so this waits its half second
  ASSERT_TRUE(seen.wait_for(2));
  std::sort(seen.events.begin(), seen.events.end());
  EXPECT_EQ(seen.events, (std::vector<std::string>{"r1 exit 5", "r2 exit 5"}));
}

TEST(Sentinel, RootLostWhenTheHubEndsWithoutDone) {
  Seen seen;
  auto hub = std::make_unique<SentinelHub>(2, "tok", PeerIdentity{0, "a", 1}, handlers(seen, "hub"));
  SentinelLink link(kLoopback, hub->port(), "tok", {1, "a", 2}, handlers(seen, "r1"));
  ASSERT_TRUE(hub->wait_for_hello({1}, 30).empty());
  hub->arm();
  link.arm();
  hub.reset();  // rank 0 dies
  ASSERT_TRUE(seen.wait_for(1));
  EXPECT_EQ(seen.events[0].rfind("r1 lost root: ", 0), 0u) << seen.events[0];
}

TEST(Sentinel, StrangersCannotJoin) {
  Seen seen, strangers;  // strangers: whether the dropped links notice before they are gone is a race
  SentinelHub hub(2, "secret", {0, "a", 1}, handlers(seen, "hub"));
  // A wrong token, then a rank out of range: the hub drops them; the real rank still joins.
  EXPECT_NO_THROW(SentinelLink(kLoopback, hub.port(), "guess", {1, "x", 9}, handlers(strangers, "bad")));
  EXPECT_NO_THROW(SentinelLink(kLoopback, hub.port(), "secret", {7, "x", 9}, handlers(strangers, "bad")));
  EXPECT_FALSE(hub.wait_for_hello({1}, 0.3).empty());
  SentinelLink good(kLoopback, hub.port(), "secret", {1, "a", 2}, handlers(seen, "r1"));
  EXPECT_TRUE(hub.wait_for_hello({1}, 30).empty());
  EXPECT_EQ(hub.peers()[1].pid, 2);
  // Once armed the hub stops listening (its thread closes the port soon after): then the link says why,
  // at connect, or at the hello when the connection sat in the closing port's backlog.
  const int port = hub.port();
  hub.arm();
  std::string refused;
  for (const auto give_up = std::chrono::steady_clock::now() + 30s; refused.empty();) {
    try {
      SentinelLink late(kLoopback, port, "secret", {1, "a", 3}, handlers(strangers, "late"));  // dropped: rank 1 is in
    } catch (const std::runtime_error& e) {
      refused = e.what();
    }
    ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "the hub still accepts connections after arm";
    if (refused.empty()) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(refused.find("cannot reach rank 0 (127.0.0.1:") != std::string::npos ||
              refused.find("cannot say hello to rank 0") != std::string::npos) << refused;
  good.finish();
  hub.finish();
  EXPECT_TRUE(seen.events.empty());
}

// A second stop signal ends a process at once, but first its signal handler tells the sentinel's peers
// (harness/guard/stop_signal.h): they then report an interruption, not a lost rank. The signals are raised in
// a forked child (a death test), which shares the sockets of this process. `rank_zero`: rank 0 (the hub)
// takes them, else rank 1 (the link).
void second_signal_is_an_interruption(bool rank_zero, int sig) {
  GTEST_FLAG_SET(death_test_style, "fast");  // fork only: the child must use this process's sockets
  Seen seen;
  auto hub = std::make_unique<SentinelHub>(2, "tok", PeerIdentity{0, "a", 1}, handlers(seen, "hub"));
  auto link = std::make_unique<SentinelLink>(kLoopback, hub->port(), "tok", PeerIdentity{1, "b", 2}, handlers(seen, "r1"));
  ASSERT_TRUE(hub->wait_for_hello({1}, 30).empty());
  // Armed last: the notice goes out on that side's sockets.
  if (rank_zero) {
    link->arm();
    hub->arm();
  } else {
    hub->arm();
    link->arm();
  }
  EXPECT_EXIT(
      {
        install_stop_handlers();
        std::raise(sig);
        std::raise(sig);
      },
      testing::ExitedWithCode(4), "");
  // Its sockets close without goodbye, as the process's would.
  if (rank_zero) hub.reset();
  else link.reset();
  ASSERT_TRUE(seen.wait_for(1));
  EXPECT_EQ(seen.events[0], rank_zero ? "r1 lost root: its process ended (connection closed) (interrupted)"
                                      : "lost 1 b: its process ended (connection closed) (interrupted)");
}

TEST(SentinelDeathTest, SecondSignalOfARankIsAnInterruption) { second_signal_is_an_interruption(false, SIGTERM); }
TEST(SentinelDeathTest, SecondSignalOfRankZeroIsAnInterruption) { second_signal_is_an_interruption(true, SIGINT); }

// ---- the two-level tree ----------------------------------------------------------------------------

// Rank 0 (node a) with rank 1 on its node; rank 2 leads node b (a link to rank 0 and a hub relaying
// for ranks 3 and 4), as Sentinel::start builds it.
struct Tree {
  explicit Tree(Seen& seen) {
    root = std::make_unique<SentinelHub>(5, "tok", PeerIdentity{0, "a", 100}, handlers(seen, "hub", Phase::collective));
    r1 = std::make_unique<SentinelLink>(kLoopback, root->port(), "tok", PeerIdentity{1, "a", 101},
                                        handlers(seen, "r1", Phase::computing));
    leader = std::make_unique<SentinelLink>(kLoopback, root->port(), "tok", PeerIdentity{2, "b", 102},
                                            handlers(seen, "r2", Phase::waiting));
    node = std::make_unique<SentinelHub>(5, "tok", PeerIdentity{2, "b", 102}, handlers(seen, "node"));
    SentinelLink* up = leader.get();
    node->relay_to([up](const nlohmann::json& m) { up->send(m); });
    leader->relay_from(node.get());
    r3 = std::make_unique<SentinelLink>(kLoopback, node->port(), "tok", PeerIdentity{3, "b", 103},
                                        handlers(seen, "r3", Phase::computing));
    r4 = std::make_unique<SentinelLink>(kLoopback, node->port(), "tok", PeerIdentity{4, "b", 104},
                                        handlers(seen, "r4", Phase::collective));
  }
  // `notice`: which side's sockets hear a second signal ("root", "r4"; none by default).
  void arm(const std::string& notice = "") {
    r1->arm(false);
    r3->arm(false);
    r4->arm(notice == "r4");
    node->arm(false);
    leader->arm(false);
    root->arm(notice == "root");
  }
  // The leader's process ends: its link to rank 0 and its node's hub close.
  void end_leader() {
    leader->halt();
    node.reset();
    leader.reset();
  }
  ~Tree() {
    if (leader) leader->halt();  // its thread calls into the node's hub
    node.reset();
  }
  std::unique_ptr<SentinelHub> root, node;
  std::unique_ptr<SentinelLink> r1, leader, r3, r4;
};

TEST(SentinelTree, RelayedHellosJoinRankZero) {
  Seen seen;
  Tree t(seen);
  EXPECT_TRUE(t.root->wait_for_hello({1, 2, 3, 4}, 30).empty());
  const auto peers = t.root->peers();
  EXPECT_EQ(peers[4].host, "b");
  EXPECT_EQ(peers[4].pid, 104);
  EXPECT_EQ(peers[3].pid, 103);
  EXPECT_EQ(peers[2].pid, 102);
  t.arm();
  // Done and goodbye through the tree, in Sentinel::finish's order: no rank is lost.
  t.r3->finish();
  t.r4->finish();
  t.r1->finish();
  t.leader->finish();
  t.node->finish();
  t.root->finish();
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(seen.events.empty());
}

TEST(SentinelTree, LostRankOfAnotherNodeReachesRankZeroWithItsIdentity) {
  Seen seen;
  Tree t(seen);
  ASSERT_TRUE(t.root->wait_for_hello({1, 2, 3, 4}, 30).empty());
  t.arm();
  t.r4.reset();  // rank 4's process ends
  ASSERT_TRUE(seen.wait_for(1));
  EXPECT_EQ(seen.events[0], "lost 4 b: its process ended (connection closed)");
  t.r3.reset();  // one loss ends the run: not reported again
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(seen.events.size(), 1u);
}

TEST(SentinelTree, LostLeaderIsTheLeaderRankAndItsNodeLosesItsHub) {
  Seen seen;
  Tree t(seen);
  ASSERT_TRUE(t.root->wait_for_hello({1, 2, 3, 4}, 30).empty());
  t.arm();
  t.end_leader();
  ASSERT_TRUE(seen.wait_for(3));
  std::sort(seen.events.begin(), seen.events.end());
  EXPECT_EQ(seen.events[0], "lost 2 b: its process ended (connection closed)");
  EXPECT_EQ(seen.events[1].rfind("r3 lost root: ", 0), 0u) << seen.events[1];
  EXPECT_EQ(seen.events[2].rfind("r4 lost root: ", 0), 0u) << seen.events[2];
}

TEST(SentinelTree, AsksEveryRankThroughItsLeader) {
  Seen seen;
  Tree t(seen);
  ASSERT_TRUE(t.root->wait_for_hello({1, 2, 3, 4}, 30).empty());
  t.arm();
  for (int round = 0; round < 2; ++round) {  // a second question is answered too (its own id)
    const auto states = t.root->ask_states(30);
    ASSERT_EQ(states.size(), 5u);
    const Phase want[] = {Phase::collective, Phase::computing, Phase::waiting, Phase::computing, Phase::collective};
    for (int r = 0; r < 5; ++r) {
      const auto& s = states[static_cast<std::size_t>(r)];
      EXPECT_TRUE(s.answered) << "rank " << r;
      EXPECT_EQ(s.rank, r);
      EXPECT_EQ(s.phase, want[r]) << "rank " << r;
      EXPECT_EQ(s.pid, 100 + r);
      EXPECT_EQ(s.progress, static_cast<std::uint64_t>(r)) << "rank " << r;  // relayed by the leaders too
      EXPECT_DOUBLE_EQ(s.idle_s, 10.0 * r) << "rank " << r;
    }
    EXPECT_EQ(states[4].doing, "r4 doing");
    EXPECT_EQ(states[3].host, "b");
  }
}

TEST(SentinelTree, ExitOrderReachesEveryRankThroughItsLeader) {
  Seen seen;
  Tree t(seen);
  ASSERT_TRUE(t.root->wait_for_hello({1, 2, 3, 4}, 30).empty());
  t.arm();
  t.root->order_exit(6, 0.5);  // nobody exits here: each hub waits its time
  ASSERT_TRUE(seen.wait_for(4));
  std::sort(seen.events.begin(), seen.events.end());
  EXPECT_EQ(seen.events, (std::vector<std::string>{"r1 exit 6", "r2 exit 6", "r3 exit 6", "r4 exit 6"}));
}

// A second signal, through the tree (as second_signal_is_an_interruption below): rank 0's reaches the
// ranks of another node through their leader; a rank's reaches rank 0 through its leader.
TEST(SentinelTreeDeathTest, SecondSignalOfRankZeroReachesAnotherNode) {
  GTEST_FLAG_SET(death_test_style, "fast");
  Seen seen;
  Tree t(seen);
  ASSERT_TRUE(t.root->wait_for_hello({1, 2, 3, 4}, 30).empty());
  t.arm("root");
  EXPECT_EXIT(
      {
        install_stop_handlers();
        std::raise(SIGTERM);
        std::raise(SIGTERM);
      },
      testing::ExitedWithCode(4), "");
  t.root.reset();  // rank 0's sockets close
  ASSERT_TRUE(seen.wait_for(2));
  t.end_leader();  // the leader goes at rank 0's interruption: its node sees it go
  ASSERT_TRUE(seen.wait_for(4));
  std::sort(seen.events.begin(), seen.events.end());
  EXPECT_EQ(seen.events, (std::vector<std::string>{"r1 lost root: its process ended (connection closed) (interrupted)",
                                                   "r2 lost root: its process ended (connection closed) (interrupted)",
                                                   "r3 lost root: its process ended (connection closed) (interrupted)",
                                                   "r4 lost root: its process ended (connection closed) (interrupted)"}));
}

TEST(SentinelTreeDeathTest, SecondSignalOfARankOfAnotherNodeReachesRankZero) {
  GTEST_FLAG_SET(death_test_style, "fast");
  Seen seen;
  Tree t(seen);
  ASSERT_TRUE(t.root->wait_for_hello({1, 2, 3, 4}, 30).empty());
  t.arm("r4");
  EXPECT_EXIT(
      {
        install_stop_handlers();
        std::raise(SIGINT);
        std::raise(SIGINT);
      },
      testing::ExitedWithCode(4), "");
  t.r4.reset();
  ASSERT_TRUE(seen.wait_for(1));
  EXPECT_EQ(seen.events[0], "lost 4 b: its process ended (connection closed) (interrupted)");
}

TEST(SentinelTree, ARankOfAnotherNodeCannotBeClaimedTwice) {
  Seen seen;
  Tree t(seen);
  ASSERT_TRUE(t.root->wait_for_hello({1, 2, 3, 4}, 30).empty());
  // Rank 3 again, directly at rank 0: refused (it joined through its leader).
  SentinelLink again(kLoopback, t.root->port(), "tok", {3, "x", 9}, handlers(seen, "again"));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(t.root->peers()[3].host, "b");
  EXPECT_TRUE(t.root->wait_for_hello({1, 2, 3, 4}, 1).empty());
}

TEST(Sentinel, AddressesEndWithLoopback) {
  Seen seen;
  SentinelHub hub(1, "t", {0, "a", 1}, handlers(seen, "hub"));
  const auto a = hub.addresses();
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a.back().rfind("127.", 0), 0u);
  hub.finish();
}

}  // namespace
}  // namespace gpuscale
