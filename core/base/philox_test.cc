// TensorFlow 2.21's own numbers (CPU kernels, tensorflow-cpu wheel): a
// Session running RandomUniform with seed=1, seed2=2, RandomStandardNormal
// with 3 and 4, TruncatedNormal with 5 and 6, shape [7], float32 and
// float64, twice (testdata/golden/DERIVATIONS.md, "Random numbers").
#include "core/base/philox.h"

#include <gtest/gtest.h>

#include <vector>

namespace tfrun {
namespace {

template <typename T>
std::vector<T> Draw(void (*fill)(PhiloxRandom, T*, int64_t), KernelRandom* random, int64_t n) {
  std::vector<T> out(static_cast<size_t>(n));
  fill(random->ReserveOutputs(n), out.data(), n);
  return out;
}

// Each case: the op's fill, its seeds, and the 7 values of its first and
// second run in one session (the generator moves on between them).
template <typename T>
struct TensorFlowDraw {
  const char* name;
  void (*fill)(PhiloxRandom, T*, int64_t);
  int64_t seed, seed2;
  std::vector<T> first, second;
};

template <typename T>
void ExpectTensorFlowsNumbers(const std::vector<TensorFlowDraw<T>>& cases) {
  for (const TensorFlowDraw<T>& c : cases) {
    KernelRandom random(c.seed, c.seed2);
    EXPECT_EQ(Draw<T>(c.fill, &random, 7), c.first) << c.name;
    EXPECT_EQ(Draw<T>(c.fill, &random, 7), c.second) << c.name << ", second run";
  }
}

TEST(PhiloxTest, Float32IsTensorFlows) {
  ExpectTensorFlowsNumbers<float>({
      {"FillUniform", FillUniform, 1, 2,
       {0.406396746635437f, 0.8575996160507202f, 0.05539584159851074f, 0.08587229251861572f, 0.41215360164642334f, 0.036630868911743164f, 0.6572133302688599f},
       {0.43261289596557617f, 0.8689680099487305f, 0.2666475772857666f, 0.6024519205093384f, 0.8833823204040527f, 0.24750876426696777f, 0.32722437381744385f}},
      {"FillStandardNormal", FillStandardNormal, 3, 4,
       {0.28962206840515137f, -0.2734510600566864f, -0.2986593246459961f, 0.13109374046325684f, -0.2823999226093292f, 1.074354648590088f, -1.8167051076889038f},
       {1.376909852027893f, 1.0514625310897827f, -1.5164775848388672f, -0.21674832701683044f, -0.4948967695236206f, -0.2650872468948364f, 1.8645120859146118f}},
      {"FillTruncatedNormal", FillTruncatedNormal, 5, 6,
       {0.7032734155654907f, -0.4358273148536682f, -0.8223473429679871f, -0.287870317697525f, -0.8171683549880981f, 0.7268020510673523f, 0.2098993957042694f},
       {0.5355849862098694f, -0.3906259536743164f, 0.7964131832122803f, -0.578670084476471f, 1.953041672706604f, -0.8844274878501892f, -0.9654062390327454f}},
  });
}

TEST(PhiloxTest, Float64IsTensorFlows) {
  ExpectTensorFlowsNumbers<double>({
      {"FillUniform", FillUniform, 1, 2,
       {0.2511744980841868, 0.44316677020093853, 0.2972296290781924, 0.2577066944684787, 0.9527181182843207, 0.8291687913947399, 0.5467094415652871},
       {0.46090345060260596, 0.13318065293589965, 0.06705912248698764, 0.6177953117668469, 0.13577060612491687, 0.4944281613281649, 0.8463250124658188}},
      {"FillStandardNormal", FillStandardNormal, 3, 4,
       {-0.7030205923675534, -1.1787800830679616, -1.1381825408299184, 1.002659122264378, 1.279767312470688, 1.8811975218473618, -0.8834742686602217},
       {0.11071357221191686, -0.6892665347945321, -0.5873239944585698, -0.13845120835857694, -0.05729289061269563, -0.032081362897650414, -0.6306445911844905}},
      {"FillTruncatedNormal", FillTruncatedNormal, 5, 6,
       {0.1463668533638762, -0.8638364206811208, -0.32429402288148657, 0.7617686797144372, -1.1367864476853689, -0.7375262516134138, -0.11343145753728195},
       {-0.5763515060422654, 1.1804909151542178, -0.016517671415761038, -1.1160564722590527, -0.6275593351831366, 0.20945115472095818, 0.3613184993236732}},
  });
}

TEST(PhiloxTest, ConversionsTakeTheMantissaBits) {
  EXPECT_EQ(Uint32ToFloat(0), 0.0f);
  EXPECT_EQ(Uint32ToFloat(0xffffffffu), 1.0f - 1.0f / (1 << 23));
  EXPECT_EQ(Uint64ToDouble(0, 0), 0.0);
  EXPECT_LT(Uint64ToDouble(0xffffffffu, 0xffffffffu), 1.0);
}

TEST(PhiloxTest, SkipCarriesAcrossWords) {
  PhiloxRandom a(7, 9), b(7, 9);
  for (int i = 0; i < 3; ++i) a.Next();
  b.Skip(3);
  EXPECT_EQ(a.Next(), b.Next());
  PhiloxRandom c(1, 0), d(1, 0);
  c.Skip(uint64_t{1} << 32);
  d.Skip(0xffffffffu);
  d.Skip(1);
  EXPECT_EQ(c.Next(), d.Next());
}

}  // namespace
}  // namespace tfrun
