// One HTTP(S) GET through libcurl, with what a resumable download needs: a start offset (a
// `Range: bytes=N-` request), the answer's status and lengths before the first body byte, timeouts
// for a server that never answers, goes silent or trickles, a stop asked from outside (Ctrl-C), and
// failures sorted into the ones worth another try (a connection cut mid-file, HTTP 5xx / 429, with
// the server's Retry-After) and the others (404). Only a 200 or 206 answer's body is the file: any
// other status is an error naming it, and so is a body the server compressed though asked not to.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "io/stop_requested.h"

namespace minrnn::fetch {

// A download or listing that failed: what() is one line naming the URL and what went wrong.
class FetchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A transfer ended because HttpOptions::should_stop asked (Ctrl-C): what() says what was kept.
using io::StopRequested;

struct HttpOptions {
  long connect_timeout_s = 30;  // no connection within this: timed out
  // Fewer than low_speed_bytes_per_s on average over low_speed_time_s (body bytes: a server that
  // sends a header line or a byte now and then holds a download as surely as a silent one): "too
  // slow", worth another try.
  int64_t low_speed_bytes_per_s = 1000;
  double low_speed_time_s = 60;
  // Polled about once a second and at every chunk; true ends the transfer
  // (TransferResult::stopped).
  std::function<bool()> should_stop;
  // Called with the same rhythm with the body bytes received so far, for progress lines that must
  // move while the server is silent.
  std::function<void(int64_t received)> on_tick;
};

// What the server answered, known before the first body byte reaches the receiver.
struct HttpResponse {
  long status = 0;              // the last answer's (after redirects), also when it failed
  int64_t content_length = -1;  // of this answer's body; -1 when not sent
  int64_t range_start = -1;     // a 206's "Content-Range: bytes <start>-..."; -1 when none
  double retry_after_s = -1;    // "Retry-After: <seconds or HTTP date>" (429, 503); -1 when none
  std::string next_page;        // "Link: <url>; rel="next"" (the hub pages long listings)
};

struct TransferResult {
  // A 200 or 206 answer whose every byte arrived: its end was announced (Content-Length, the last
  // chunk, HTTP/2's end of stream), not only a closed connection, which a cut looks the same as.
  bool complete = false;
  bool stopped = false;           // should_stop() asked
  bool receiver_refused = false;  // the receiver returned false (its reason is its own)
  bool transient = false;         // worth another try: cut mid-answer, too slow, HTTP 5xx / 429
  HttpResponse response;
  std::string error;  // "HTTP 404 Not Found", "connection refused (...)", "timed out: ..."
};

// Gets the body in order; returns false to abort the transfer.
using BodyReceiver = std::function<bool(const HttpResponse&, const char* data, size_t n)>;

// GET `url` (following redirects), asking for the bytes from `range_start` on when it is > 0, and
// for no Content-Encoding. Only a 200's or 206's body reaches the receiver. The network's failures
// are in the result, never thrown; what the receiver or a callback throws ends the transfer and is
// thrown on from here.
TransferResult http_get(const std::string& url, int64_t range_start, const HttpOptions& options,
                        const BodyReceiver& receive);

// A small document (a listing, a metadata file) in memory, at most `max_bytes`. Throws FetchError
// naming the URL on any failure, StopRequested when stopped; *next_page (when given) gets the
// answer's next-page link.
std::string http_get_text(const std::string& url, const HttpOptions& options,
                          std::string* next_page = nullptr, size_t max_bytes = 64 << 20);

}  // namespace minrnn::fetch
