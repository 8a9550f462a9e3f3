// User text in messages: one line, whatever bytes it holds.
#include "core/base/status.h"

#include <gtest/gtest.h>

#include <string>

namespace tfrun {
namespace {

// A node name with a newline, an escape sequence or bytes that are not
// UTF-8 made two-line errors and raw escape sequences on the terminal.
TEST(StatusTest, ClipForMessageEscapesControlsAndBytesThatAreNotUtf8) {
  EXPECT_EQ(ClipForMessage("a\nb"), "a\\nb");
  EXPECT_EQ(ClipForMessage("a\x1b[31mb"), "a\\x1b[31mb");
  EXPECT_EQ(ClipForMessage("a\xff" "b"), "a\\xffb");
  EXPECT_EQ(ClipForMessage(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(ClipForMessage("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  // Overlong, surrogate, past U+10FFFF, truncated: not UTF-8.
  EXPECT_EQ(ClipForMessage("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(ClipForMessage("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(ClipForMessage("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
  EXPECT_EQ(ClipForMessage("\xe2\x82"), "\\xe2\\x82");
}

TEST(StatusTest, Utf8Lengths) {
  EXPECT_EQ(Utf8Length("a", 0), 1u);
  EXPECT_EQ(Utf8Length("\xc3\xa9", 0), 2u);
  EXPECT_EQ(Utf8Length("\xe2\x82\xac", 0), 3u);
  EXPECT_EQ(Utf8Length("\xf0\x9f\x98\x80", 0), 4u);
  EXPECT_EQ(Utf8Length("\x80", 0), 0u);
  EXPECT_EQ(Utf8Length("\xe0\x80\x80", 0), 0u);  // overlong
}

}  // namespace
}  // namespace tfrun
