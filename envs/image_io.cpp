#include "envs/image_io.h"

#include <algorithm>
#include <cmath>

#include <zlib.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <unordered_map>

#include "io/atomic_file.h"

namespace minrnn::envs {

namespace {

// What marks a file as these writers' (written_by_minrnn): PNG's text chunk (its length and type,
// then "Software", NUL, the writer), GIF's comment extension (introducer, label, a sub-block of 6
// bytes, its end).
constexpr uint8_t kPngTag[] = {0,   0,   0,   15,  't', 'E', 'X', 't', 'S', 'o', 'f', 't',
                               'w', 'a', 'r', 'e', 0,   'm', 'i', 'n', 'r', 'n', 'n'};
constexpr uint8_t kGifTag[] = {0x21, 0xfe, 6, 'm', 'i', 'n', 'r', 'n', 'n', 0};
// Both stand in a file's first bytes: PNG's after its signature and header (33), GIF's after its
// header, colour table and loop extension (800).
constexpr size_t kTagWithin = 1024;

void check_frame(const char* who, const std::vector<uint8_t>& rgb, int width, int height) {
  if (width <= 0 || height <= 0 || width > 65535 || height > 65535) {
    throw std::invalid_argument(std::string(who) + ": bad image size " + std::to_string(width) +
                                "x" + std::to_string(height));
  }
  if (rgb.size() != static_cast<size_t>(width) * height * 3) {
    throw std::invalid_argument(std::string(who) + ": frame has " + std::to_string(rgb.size()) +
                                " bytes, expected width*height*3 = " +
                                std::to_string(static_cast<size_t>(width) * height * 3));
  }
}

void put_be32(std::vector<uint8_t>& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(v >> s));
}

void put_le16(std::vector<uint8_t>& out, int v) {
  out.push_back(static_cast<uint8_t>(v & 0xff));
  out.push_back(static_cast<uint8_t>((v >> 8) & 0xff));
}

void png_chunk(std::vector<uint8_t>& out, const char* type, const std::vector<uint8_t>& data) {
  put_be32(out, static_cast<uint32_t>(data.size()));
  const size_t start = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  const uLong crc = crc32(0L, out.data() + start, static_cast<uInt>(out.size() - start));
  put_be32(out, static_cast<uint32_t>(crc));
}

// 6x6x6 colour cube: index = 36 r + 6 g + b, each level rounded from 0..255.
uint8_t cube_index(const uint8_t* rgb) {
  auto level = [](uint8_t c) { return (c * 5 + 127) / 255; };
  return static_cast<uint8_t>(36 * level(rgb[0]) + 6 * level(rgb[1]) + level(rgb[2]));
}

// Variable-width LZW as GIF specifies it (min code size 8, codes up to 12 bits, LSB first).
class GifLzw {
 public:
  explicit GifLzw(std::vector<uint8_t>& out) : out_(out) {}

  void encode(const std::vector<uint8_t>& indices) {
    out_.push_back(8);  // LZW minimum code size
    reset_table();
    emit(kClear);
    int prefix = -1;
    for (uint8_t c : indices) {
      if (prefix < 0) {
        prefix = c;
        continue;
      }
      const uint32_t key = (static_cast<uint32_t>(prefix) << 8) | c;
      const auto it = table_.find(key);
      if (it != table_.end()) {
        prefix = it->second;
        continue;
      }
      emit(prefix);
      if (next_code_ == 4096) {  // table full: start over
        emit(kClear);
        reset_table();
      } else {
        table_[key] = next_code_++;
        // The decoder widens codes once its table reaches 2^width entries.
        if (next_code_ > (1 << width_) && width_ < 12) ++width_;
      }
      prefix = c;
    }
    if (prefix >= 0) emit(prefix);
    emit(kEnd);
    if (bit_count_ > 0) block_.push_back(static_cast<uint8_t>(bits_));
    flush_block(true);
    out_.push_back(0);  // block terminator
  }

 private:
  static constexpr int kClear = 256, kEnd = 257;

  void reset_table() {
    table_.clear();
    next_code_ = 258;
    width_ = 9;
  }
  void emit(int code) {
    bits_ |= static_cast<uint32_t>(code) << bit_count_;
    bit_count_ += width_;
    while (bit_count_ >= 8) {
      block_.push_back(static_cast<uint8_t>(bits_ & 0xff));
      bits_ >>= 8;
      bit_count_ -= 8;
      flush_block(false);
    }
  }
  void flush_block(bool all) {
    while (block_.size() >= 255 || (all && !block_.empty())) {
      const size_t n = std::min<size_t>(255, block_.size());
      out_.push_back(static_cast<uint8_t>(n));
      out_.insert(out_.end(), block_.begin(), block_.begin() + n);
      block_.erase(block_.begin(), block_.begin() + n);
    }
  }

  std::vector<uint8_t>& out_;
  std::vector<uint8_t> block_;
  std::unordered_map<uint32_t, int> table_;
  int next_code_ = 258;
  int width_ = 9;
  uint32_t bits_ = 0;
  int bit_count_ = 0;
};

}  // namespace

void make_directories(const std::string& dir) {
  // POSIX, not std::filesystem: libtorch.so exports its own std::filesystem symbols, which
  // interpose on ours in torch-linked binaries and crash (seen with torch 2.11's wheel).
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at != dir.size() && dir[at] != '/') continue;
    const std::string prefix = dir.substr(0, at);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      throw std::runtime_error("cannot create directory " + prefix + ": " + std::strerror(errno));
    }
  }
  struct stat info;
  if (stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    throw std::runtime_error("not a directory: " + dir);
  }
}

void write_png(const std::string& path, const std::vector<uint8_t>& rgb, int width, int height) {
  check_frame("write_png", rgb, width, height);
  const size_t row = static_cast<size_t>(width) * 3;
  std::vector<uint8_t> raw;  // each row: filter type 0, then the pixels
  raw.reserve((row + 1) * height);
  for (int y = 0; y < height; ++y) {
    raw.push_back(0);
    raw.insert(raw.end(), rgb.begin() + y * row, rgb.begin() + (y + 1) * row);
  }
  uLongf packed_size = compressBound(static_cast<uLong>(raw.size()));
  std::vector<uint8_t> packed(packed_size);
  if (compress2(packed.data(), &packed_size, raw.data(), static_cast<uLong>(raw.size()), 6) !=
      Z_OK) {
    throw std::runtime_error("write_png: zlib failed compressing " + path);
  }
  packed.resize(packed_size);

  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<uint8_t> header;
  put_be32(header, static_cast<uint32_t>(width));
  put_be32(header, static_cast<uint32_t>(height));
  header.insert(header.end(), {8, 2, 0, 0, 0});  // 8-bit RGB, deflate, no filter, no interlace
  png_chunk(png, "IHDR", header);
  png_chunk(png, "tEXt", {std::begin(kPngTag) + 8, std::end(kPngTag)});  // after its type
  png_chunk(png, "IDAT", packed);
  png_chunk(png, "IEND", {});
  io::write_file_atomically(path, {reinterpret_cast<const char*>(png.data()), png.size()});
}

void write_gif(const std::string& path, const std::vector<std::vector<uint8_t>>& frames, int width,
               int height, int delay_centiseconds) {
  if (frames.empty()) throw std::invalid_argument("write_gif: no frames for " + path);
  for (const auto& f : frames) check_frame("write_gif", f, width, height);
  std::vector<uint8_t> gif = {'G', 'I', 'F', '8', '9', 'a'};
  put_le16(gif, width);
  put_le16(gif, height);
  gif.insert(gif.end(), {0xf7, 0, 0});  // global colour table of 256 entries
  for (int i = 0; i < 256; ++i) {
    const int r = i / 36, g = (i / 6) % 6, b = i % 6;
    const bool used = i < 216;
    gif.push_back(static_cast<uint8_t>(used ? r * 51 : 0));
    gif.push_back(static_cast<uint8_t>(used ? g * 51 : 0));
    gif.push_back(static_cast<uint8_t>(used ? b * 51 : 0));
  }
  // NETSCAPE2.0 extension: loop forever.
  const uint8_t loop[] = {0x21, 0xff, 0x0b, 'N', 'E', 'T', 'S', 'C', 'A', 'P',
                          'E',  '2',  '.',  '0', 3,   1,   0,   0,   0};
  gif.insert(gif.end(), loop, loop + sizeof(loop));
  gif.insert(gif.end(), std::begin(kGifTag), std::end(kGifTag));
  std::vector<uint8_t> indices(static_cast<size_t>(width) * height);
  for (const auto& frame : frames) {
    gif.insert(gif.end(), {0x21, 0xf9, 4, 0});  // graphic control: delay, no transparency
    put_le16(gif, delay_centiseconds);
    gif.insert(gif.end(), {0, 0});
    gif.push_back(0x2c);  // image descriptor covering the whole canvas
    put_le16(gif, 0);
    put_le16(gif, 0);
    put_le16(gif, width);
    put_le16(gif, height);
    gif.push_back(0);
    for (size_t p = 0; p < indices.size(); ++p) indices[p] = cube_index(&frame[3 * p]);
    GifLzw(gif).encode(indices);
  }
  gif.push_back(0x3b);
  io::write_file_atomically(path, {reinterpret_cast<const char*>(gif.data()), gif.size()});
}

GifTiming real_time_gif(double step_seconds) {
  const double step_cs = step_seconds * 100;
  // The fewest frames kept whose time is a whole number of centiseconds, 2 or more; else the
  // first stride past 2 cs, its delay rounded.
  for (int stride = 1; stride <= 100; ++stride) {
    const double cs = stride * step_cs;
    if (cs >= 2 - 1e-9 && std::abs(cs - std::round(cs)) < 1e-6)
      return {stride, static_cast<int>(std::round(cs))};
  }
  const int stride = std::max(1, static_cast<int>(std::ceil(2 / step_cs)));
  return {stride, static_cast<int>(std::round(stride * step_cs))};
}

bool written_by_minrnn(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;  // a FIFO's open would wait
  std::ifstream in(path, std::ios::binary);
  std::string head(kTagWithin, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  const auto holds = [&](const uint8_t* tag, size_t size) {
    return head.find(std::string(reinterpret_cast<const char*>(tag), size)) != std::string::npos;
  };
  return (head.rfind("\x89PNG", 0) == 0 && holds(kPngTag, sizeof kPngTag)) ||
         (head.rfind("GIF89a", 0) == 0 && holds(kGifTag, sizeof kGifTag));
}

}  // namespace minrnn::envs
