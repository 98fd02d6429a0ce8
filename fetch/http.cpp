#include "fetch/http.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <memory>
#include <mutex>

#include "fetch/progress.h"
#include "io/text.h"

namespace minrnn::fetch {
namespace {

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// State shared with libcurl's callbacks for one transfer.
struct Transfer {
  const HttpOptions* options = nullptr;
  const BodyReceiver* receive = nullptr;
  CURL* curl = nullptr;
  HttpResponse response;
  std::string reason;    // the last status line's reason phrase ("Not Found")
  std::string encoding;  // the last answer's Content-Encoding, "" when none
  bool chunked = false;  // the last answer's Transfer-Encoding: its end is announced
  bool response_known = false;
  bool unwanted = false;  // not a 200 / 206, or compressed: its body is not the file
  bool stopped = false;
  bool refused = false;
  bool too_slow = false;
  int64_t received = 0;
  // The low-speed check's window: when it began and how many body bytes had arrived then.
  std::chrono::steady_clock::time_point window_began = std::chrono::steady_clock::now();
  int64_t window_received = 0;
  // An exception from the receiver or a callback: it must not unwind through libcurl's C frames,
  // so it is kept here and thrown again once curl_easy_perform has returned.
  std::exception_ptr thrown;
};

// "Retry-After: 120" or "Retry-After: Fri, 31 Dec 2027 23:59:59 GMT", in seconds from now.
double retry_after_seconds(const std::string& value) {
  if (!value.empty() && std::isdigit(static_cast<unsigned char>(value[0]))) {
    try {
      return std::stod(value);
    } catch (const std::exception&) {
      return -1;
    }
  }
  const time_t when = curl_getdate(value.c_str(), nullptr);
  return when < 0 ? -1 : std::max(0.0, std::difftime(when, std::time(nullptr)));
}

// Headers of every answer on the way (redirects included): a status line starts a new answer.
size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {
    t->response = HttpResponse{};
    t->encoding.clear();
    t->chunked = false;
    const size_t code_at = line.find(' ');
    const size_t reason_at = code_at == std::string::npos ? code_at : line.find(' ', code_at + 1);
    t->reason = reason_at == std::string::npos ? "" : io::trimmed(line.substr(reason_at + 1));
    return size * count;
  }
  const size_t colon = line.find(':');
  if (colon == std::string::npos) return size * count;
  const std::string name = io::lowercase(io::trimmed(line.substr(0, colon)));
  const std::string value = io::trimmed(line.substr(colon + 1));
  if (name == "content-range" && io::lowercase(value).rfind("bytes ", 0) == 0) {
    try {
      t->response.range_start = std::stoll(value.substr(6));
    } catch (const std::exception&) {
      t->response.range_start = -1;  // "bytes */123" (a 416's): no start
    }
  } else if (name == "link" && value.find("rel=\"next\"") != std::string::npos) {
    const size_t open = value.find('<'), close = value.find('>');
    if (open != std::string::npos && close != std::string::npos && close > open)
      t->response.next_page = value.substr(open + 1, close - open - 1);
  } else if (name == "retry-after") {
    t->response.retry_after_s = retry_after_seconds(value);
  } else if (name == "content-encoding") {
    t->encoding = io::lowercase(value) == "identity" ? "" : value;
  } else if (name == "transfer-encoding") {
    t->chunked = io::lowercase(value).find("chunked") != std::string::npos;
  }
  return size * count;
}

// The answer as the receiver sees it; false when its body is not the file (t->unwanted).
bool learn_response(Transfer* t) {
  t->response_known = true;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &t->response.status);
  curl_off_t length = -1;
  curl_easy_getinfo(t->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
  t->response.content_length = length;
  t->unwanted = (t->response.status != 200 && t->response.status != 206) || !t->encoding.empty();
  return !t->unwanted;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  try {
    if (!t->response_known && !learn_response(t)) return 0;  // CURLE_WRITE_ERROR
    if (t->options->should_stop && t->options->should_stop()) {
      t->stopped = true;
      return 0;
    }
    const size_t n = size * count;
    if (!(*t->receive)(t->response, data, n)) {
      t->refused = true;
      return 0;  // CURLE_WRITE_ERROR
    }
    t->received += int64_t(n);
    return n;
  } catch (...) {
    t->thrown = std::current_exception();
    return 0;
  }
}

// Our own low-speed check rather than CURLOPT_LOW_SPEED_*: those take whole seconds (the tests
// need less), and here the window's rate is exactly the body bytes over the window's time.
bool too_slow(Transfer* t) {
  const auto now = std::chrono::steady_clock::now();
  const double window = std::chrono::duration<double>(now - t->window_began).count();
  if (window < t->options->low_speed_time_s) return false;
  if (double(t->received - t->window_received) < double(t->options->low_speed_bytes_per_s) * window)
    return true;
  t->window_began = now;
  t->window_received = t->received;
  return false;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  try {
    if (t->options->on_tick) t->options->on_tick(t->received);
    if (t->options->should_stop && t->options->should_stop()) {
      t->stopped = true;
      return 1;  // CURLE_ABORTED_BY_CALLBACK
    }
    if (too_slow(t)) {
      t->too_slow = true;
      return 1;
    }
    return 0;
  } catch (...) {
    t->thrown = std::current_exception();
    return 1;
  }
}

// An answer whose body is not the file: "HTTP 404 Not Found", "HTTP 204 No Content: ...".
std::string unwanted_answer(const Transfer& t, long status, bool* transient) {
  std::string what = "HTTP " + std::to_string(status) + (t.reason.empty() ? "" : " " + t.reason);
  *transient = status >= 500 || status == 429;
  if (status >= 300 && status < 400) return what + " without a Location to follow";
  if (status >= 400) return what;
  if (status != 200 && status != 206) return what + ": expected 200 or 206 with the bytes";
  return what + " with Content-Encoding: " + t.encoding +
         ", though asked for the bytes as they are (Accept-Encoding: identity)";
}

// One line for what went wrong; `transient` says whether another try may go better.
std::string describe_failure(CURLcode code, const char* detail, const Transfer& t,
                             bool* transient) {
  const std::string more = detail[0] ? std::string(" (") + detail + ")" : "";
  *transient = false;
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return "cannot resolve the host" + more;
    case CURLE_COULDNT_CONNECT:  // refused, unreachable, or no socket (out of file descriptors)
      return "cannot connect" + more;
    case CURLE_OPERATION_TIMEDOUT:  // connecting took longer than connect_timeout_s
      *transient = true;
      return "timed out" + more;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      *transient = true;
      return "the connection was cut after " + std::to_string(t.received) + " bytes" + more;
    default:
      return std::string(curl_easy_strerror(code)) + more;
  }
}

// Whether the answer said where its body ends; a body that only ends when the connection closes
// cannot be told from one cut short.
bool end_announced(const Transfer& t) {
  curl_off_t length = -1;
  curl_easy_getinfo(t.curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
  long version = 0;
  curl_easy_getinfo(t.curl, CURLINFO_HTTP_VERSION, &version);
  return length >= 0 || t.chunked || version >= CURL_HTTP_VERSION_2_0;
}

// What a finished curl_easy_perform means, into `result`.
void judge(CURLcode code, const char* detail, const Transfer& t, const HttpOptions& options,
           TransferResult* result) {
  const long status = result->response.status;
  if (t.too_slow) {
    result->transient = true;
    result->error = "too slow: fewer than " + std::to_string(options.low_speed_bytes_per_s) +
                    " bytes/s over " + seconds_text(options.low_speed_time_s) + " s (" +
                    std::to_string(t.received) + " bytes received)";
  } else if (t.stopped || code == CURLE_ABORTED_BY_CALLBACK) {
    result->stopped = true;
    result->error = "stopped";
  } else if (t.unwanted || (code == CURLE_OK && status != 200 && status != 206)) {
    result->error = unwanted_answer(t, status, &result->transient);
  } else if (t.refused) {
    result->receiver_refused = true;
    result->error = "refused by the receiver";
  } else if (code != CURLE_OK) {
    result->error = describe_failure(code, detail, t, &result->transient);
  } else if (!end_announced(t)) {
    result->transient = true;
    result->error = "the connection closed after " + std::to_string(t.received) +
                    " bytes, and the answer gave no Content-Length: taken as cut";
  } else {
    result->complete = true;
  }
}

}  // namespace

TransferResult http_get(const std::string& url, int64_t range_start, const HttpOptions& options,
                        const BodyReceiver& receive) {
  global_init_once();
  // Before the handle: it is freed after the handle that points to it.
  const std::unique_ptr<curl_slist, void (*)(curl_slist*)> headers(
      curl_slist_append(nullptr, "Accept-Encoding: identity"), curl_slist_free_all);
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  TransferResult result;
  if (!curl) {
    result.error = "libcurl could not start a transfer";
    return result;
  }
  Transfer t;
  t.options = &options;
  t.receive = &receive;
  t.curl = curl.get();
  char detail[CURL_ERROR_SIZE] = "";
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, detail);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);  // the hub answers a file with a redirect
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_USERAGENT, "minrnn/0.1 libcurl");
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, options.connect_timeout_s);
  // The bytes as published: a compressed body would not match the size and checksum.
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 256L * 1024);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
  const std::string range = std::to_string(range_start) + "-";
  if (range_start > 0) curl_easy_setopt(c, CURLOPT_RANGE, range.c_str());
  const CURLcode code = curl_easy_perform(c);
  if (t.thrown) std::rethrow_exception(t.thrown);
  result.response = t.response;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &result.response.status);
  judge(code, detail, t, options, &result);
  return result;
}

std::string http_get_text(const std::string& url, const HttpOptions& options,
                          std::string* next_page, size_t max_bytes) {
  std::string text;
  bool too_long = false;
  const TransferResult r =
      http_get(url, 0, options, [&](const HttpResponse&, const char* data, size_t n) {
        if (text.size() + n > max_bytes) return !(too_long = true);
        text.append(data, n);
        return true;
      });
  if (r.stopped) throw StopRequested("stopped while reading " + url);
  if (too_long) {
    throw FetchError("cannot read " + url + ": the answer is longer than " +
                     std::to_string(max_bytes) + " bytes");
  }
  if (!r.complete) throw FetchError("cannot read " + url + ": " + r.error);
  if (next_page) *next_page = r.response.next_page;
  return text;
}

}  // namespace minrnn::fetch
