#include "core/eval/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace hydra::core::eval {
namespace {

// C(n-c, k) / C(n, k) as the other product, over k factors (n-c-j)/(n-j), in
// long double: an independent check of passAtK's product over c factors.
double passAtKByKFactors(int n, int c, int k) {
  long double failAll = 1.0L;
  for (int j = 0; j < k; ++j) failAll *= static_cast<long double>(n - c - j) / static_cast<long double>(n - j);
  return static_cast<double>(1.0L - failAll);
}

// The same through log-gamma: (n-c)! (n-k)! / ((n-c-k)! n!).
double passAtKByLgamma(int n, int c, int k) {
  const double logRatio = std::lgamma(n - c + 1.0) + std::lgamma(n - k + 1.0) - std::lgamma(n - c - k + 1.0) -
                          std::lgamma(n + 1.0);
  return 1.0 - std::exp(logRatio);
}

TEST(PassAtKTest, NoSolvedSampleIsZeroAndAllSolvedIsOne) {
  EXPECT_EQ(passAtK(10, 0, 1), 0.0);
  EXPECT_EQ(passAtK(10, 0, 10), 0.0);
  EXPECT_EQ(passAtK(10, 10, 1), 1.0);
  EXPECT_EQ(passAtK(1, 1, 1), 1.0);
  EXPECT_EQ(passAtK(1, 0, 1), 0.0);
}

TEST(PassAtKTest, FewerFailuresThanKIsExactlyOne) {
  EXPECT_EQ(passAtK(5, 4, 2), 1.0);  // n - c = 1 < 2
  EXPECT_EQ(passAtK(5, 2, 4), 1.0);  // n - c = 3 < 4
  EXPECT_EQ(passAtK(1000, 991, 10), 1.0);
}

TEST(PassAtKTest, SmallCasesByHand) {
  // n=5, c=2: pass@1 = c/n; pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10; pass@3 = 1 - C(3,3)/C(5,3) = 1 - 1/10.
  EXPECT_DOUBLE_EQ(*passAtK(5, 2, 1), 0.4);
  EXPECT_DOUBLE_EQ(*passAtK(5, 2, 2), 0.7);
  EXPECT_DOUBLE_EQ(*passAtK(5, 2, 3), 0.9);
  // n=3, c=1: pass@2 = 1 - C(2,2)/C(3,2) = 2/3.
  EXPECT_DOUBLE_EQ(*passAtK(3, 1, 2), 2.0 / 3.0);
  // pass@1 is always c/n.
  EXPECT_DOUBLE_EQ(*passAtK(7, 3, 1), 3.0 / 7.0);
  EXPECT_NEAR(*passAtK(200, 10, 1), 0.05, 1e-15);  // a product of 10 rounded factors
}

TEST(PassAtKTest, LargerCasesAgreeWithIndependentComputations) {
  // 1 - C(190,5)/C(200,5), computed exactly with rationals elsewhere.
  EXPECT_NEAR(*passAtK(200, 10, 5), 0.22828446073733424, 1e-14);
  EXPECT_NEAR(*passAtK(200, 10, 5), passAtKByKFactors(200, 10, 5), 1e-14);
  EXPECT_NEAR(*passAtK(200, 10, 5), passAtKByLgamma(200, 10, 5), 1e-10);
  // 1 - C(997,100)/C(1000,100): C(1000,100) alone is about 6e139.
  EXPECT_NEAR(*passAtK(1000, 3, 100), 0.2712433876762534, 1e-14);
  EXPECT_NEAR(*passAtK(1000, 3, 100), passAtKByKFactors(1000, 3, 100), 1e-13);
  EXPECT_NEAR(*passAtK(1000, 3, 100), passAtKByLgamma(1000, 3, 100), 1e-10);
  // Beyond: n = 5000, and many solved.
  EXPECT_NEAR(*passAtK(5000, 10, 50), 0.0957002426135801, 1e-13);
  EXPECT_NEAR(*passAtK(5000, 2500, 10), passAtKByKFactors(5000, 2500, 10), 1e-12);
  EXPECT_NEAR(*passAtK(100000, 400, 1000), passAtKByLgamma(100000, 400, 1000), 1e-9);
}

TEST(PassAtKTest, GrowsWithKAndWithC) {
  double previous = 0;
  for (int k = 1; k <= 20; ++k) {
    const double p = *passAtK(20, 3, k);
    EXPECT_GE(p, previous) << k;
    EXPECT_LE(p, 1.0) << k;
    previous = p;
  }
  previous = 0;
  for (int c = 0; c <= 20; ++c) {
    const double p = *passAtK(20, c, 5);
    EXPECT_GE(p, previous) << c;
    previous = p;
  }
}

TEST(PassAtKTest, UndefinedInputsAreNotGuessed) {
  EXPECT_EQ(passAtK(5, 2, 6), std::nullopt) << "k > n";
  EXPECT_EQ(passAtK(5, 2, 0), std::nullopt) << "k < 1";
  EXPECT_EQ(passAtK(5, 2, -1), std::nullopt);
  EXPECT_EQ(passAtK(0, 0, 1), std::nullopt) << "n < 1";
  EXPECT_EQ(passAtK(-3, 0, 1), std::nullopt);
  EXPECT_EQ(passAtK(5, -1, 1), std::nullopt) << "c < 0";
  EXPECT_EQ(passAtK(5, 6, 1), std::nullopt) << "c > n";
}

TEST(Wilson95Test, KnownValues) {
  const Interval eight = wilson95(8, 10);
  EXPECT_NEAR(eight.low, 0.4902, 5e-5);
  EXPECT_NEAR(eight.high, 0.9433, 5e-5);
  EXPECT_NEAR(eight.low, 0.49016247153664183, 1e-12);
  EXPECT_NEAR(eight.high, 0.9433178485456247, 1e-12);

  const Interval none = wilson95(0, 10);
  EXPECT_EQ(none.low, 0.0);
  EXPECT_NEAR(none.high, 0.2775327998628892, 1e-12);

  const Interval all = wilson95(10, 10);
  EXPECT_NEAR(all.low, 0.7224672001371107, 1e-12);
  EXPECT_LE(all.high, 1.0);
  EXPECT_NEAR(all.high, 1.0, 1e-12);

  const Interval oneOfThree = wilson95(1, 3);
  EXPECT_NEAR(oneOfThree.low, 0.06149194472039621, 1e-12);
  EXPECT_NEAR(oneOfThree.high, 0.7923403991979522, 1e-12);
}

TEST(Wilson95Test, SymmetricAroundAHalf) {
  const Interval a = wilson95(3, 10);
  const Interval b = wilson95(7, 10);
  EXPECT_NEAR(a.low, 1.0 - b.high, 1e-12);
  EXPECT_NEAR(a.high, 1.0 - b.low, 1e-12);
}

TEST(Wilson95Test, NoSamplesKnowsNothingAndBadCountsThrow) {
  EXPECT_EQ(wilson95(0, 0), (Interval{0.0, 1.0}));
  EXPECT_THROW(wilson95(11, 10), std::invalid_argument);
  EXPECT_THROW(wilson95(-1, 10), std::invalid_argument);
  EXPECT_THROW(wilson95(0, -1), std::invalid_argument);
}

TEST(ForgetestScoreTest, AFailedBuildScoresNothing) {
  EXPECT_EQ(forgetestScore(false, 10, 0, 0), 0.0);
  EXPECT_EQ(forgetestScore(false, 0, 0, 0), 0.0);
}

TEST(ForgetestScoreTest, BuildTestsAndLintAddUp) {
  EXPECT_DOUBLE_EQ(forgetestScore(true, 10, 0, 0), 1.0);
  EXPECT_DOUBLE_EQ(forgetestScore(true, 3, 1, 0), 0.4 + 0.5 * 0.75 + 0.1);
  EXPECT_DOUBLE_EQ(forgetestScore(true, 0, 4, 0), 0.5);
  EXPECT_DOUBLE_EQ(forgetestScore(true, 1, 1, 3), 0.4 + 0.25 + 0.07);
}

TEST(ForgetestScoreTest, NoTestsGiveNoTestShare) {
  EXPECT_DOUBLE_EQ(forgetestScore(true, 0, 0, 0), 0.5);
  EXPECT_DOUBLE_EQ(forgetestScore(true, 0, 0, 5), 0.45);
}

TEST(ForgetestScoreTest, TenWarningsOrMoreLoseTheLintShare) {
  EXPECT_DOUBLE_EQ(forgetestScore(true, 2, 0, 9), 0.9 + 0.01);
  EXPECT_DOUBLE_EQ(forgetestScore(true, 2, 0, 10), 0.9);
  EXPECT_DOUBLE_EQ(forgetestScore(true, 2, 0, 250), 0.9);
}

TEST(ForgetestScoreTest, NegativeCountsCountAsZero) {
  EXPECT_DOUBLE_EQ(forgetestScore(true, -1, -1, -5), 0.5);
  EXPECT_DOUBLE_EQ(forgetestScore(true, 2, -3, 0), 1.0);
}

}  // namespace
}  // namespace hydra::core::eval
