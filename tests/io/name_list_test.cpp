#include "io/name_list.h"

#include <gtest/gtest.h>

namespace minrnn::io {
namespace {

const std::vector<std::string> kKeys = {"embed_dim", "n_layers", "n_heads", "seeds", "dropout"};

TEST(NameList, ATypoIsOfferedTheNameItMostLikelyMeant) {
  EXPECT_EQ(did_you_mean("embd_dim", kKeys), " (did you mean 'embed_dim'?)");  // a deletion
  EXPECT_EQ(did_you_mean("seed", kKeys), " (did you mean 'seeds'?)");          // an insertion
  EXPECT_EQ(did_you_mean("drpoout", kKeys), " (did you mean 'dropout'?)");     // a swap
  EXPECT_EQ(did_you_mean("n_layrs", kKeys), " (did you mean 'n_layers'?)");
  EXPECT_EQ(did_you_mean("Embed_Dim", kKeys), " (did you mean 'embed_dim'?)");  // case alone
  // Every offer in one wording, a path's or an option's too; none for nothing meant.
  EXPECT_EQ(did_you_mean_text("runs/a"), " (did you mean 'runs/a'?)");
  EXPECT_EQ(did_you_mean_text(""), "");
}

TEST(NameList, NothingIsOfferedWhereNoNameIsCloseOrTwoAreEquallyClose) {
  EXPECT_EQ(did_you_mean("learning_rate", kKeys), "");
  EXPECT_EQ(did_you_mean("x", kKeys), "");
  EXPECT_EQ(did_you_mean("seeds", kKeys), "");  // a known name is not a typo
  EXPECT_EQ(did_you_mean("n_head", {"n_heads", "n_hear"}), "");
  EXPECT_EQ(did_you_mean("abc", {}), "");
  // A damaged file's megabyte-long key.
  EXPECT_EQ(did_you_mean(std::string(1 << 20, 'e') + "mbed_dim", kKeys), "");
  // A third of the longer name's length at most: two edits of a six-letter name, not three.
  EXPECT_EQ(did_you_mean("hxppxr", {"hopper"}), " (did you mean 'hopper'?)");
  EXPECT_EQ(did_you_mean("hxxpxr", {"hopper"}), "");
}

TEST(NameList, AHintOffersTheTypoItsNameThenListsEveryName) {
  EXPECT_EQ(known_names_hint("seed", {"seeds", "out"}),
            " (did you mean 'seeds'?) (known: seeds, out)");
  EXPECT_EQ(known_names_hint("zzz", {"seeds", "out"}), " (known: seeds, out)");
}

TEST(NameList, CommaSeparated) {
  EXPECT_EQ(comma_separated({}), "");
  EXPECT_EQ(comma_separated({"a"}), "a");
  EXPECT_EQ(comma_separated({"a", "b", "c"}), "a, b, c");
}

// One phrase for a list in a message (it was written twice: the report's files, the envs a
// dataset's widths fit).
TEST(NameList, NamesPhrase) {
  EXPECT_EQ(names_phrase({}), "");
  EXPECT_EQ(names_phrase({"a"}), "a");
  EXPECT_EQ(names_phrase({"a", "b"}), "a and b");
  EXPECT_EQ(names_phrase({"a", "b", "c", "d"}), "a, b, c and d");  // "and 1 more" says less
  EXPECT_EQ(names_phrase({"a", "b", "c", "d", "e"}), "a, b, c and 2 more");
  EXPECT_EQ(names_phrase({"a", "b", "c"}, 1), "a and 2 more");
}

}  // namespace
}  // namespace minrnn::io
