// The iostream family in one place (cuda2tile parse stub): ios_base, ostream/istream, cout/cerr/
// cin, manipulators (<iomanip>), string streams (<sstream>), file streams (<fstream>), stream
// iterators.  Streams are plain classes over char (no basic_* templates).
#ifndef __CUDA2TILE_IOSTREAMS_H
#define __CUDA2TILE_IOSTREAMS_H
#pragma clang system_header
#include <cstddef>
#include <stdio.h>
#include <ctime>
#include <string>
#include <iterator>
#include <exception>
namespace std {
typedef long long streamsize;
typedef long long streamoff;
typedef long long streampos;

class ios_base {
 public:
  typedef unsigned int fmtflags;
  static constexpr fmtflags boolalpha = 1u << 0, dec = 1u << 1, fixed = 1u << 2, hex = 1u << 3,
                            internal = 1u << 4, left = 1u << 5, oct = 1u << 6, right = 1u << 7,
                            scientific = 1u << 8, showbase = 1u << 9, showpoint = 1u << 10,
                            showpos = 1u << 11, skipws = 1u << 12, unitbuf = 1u << 13,
                            uppercase = 1u << 14, adjustfield = left | right | internal,
                            basefield = dec | oct | hex, floatfield = scientific | fixed;
  typedef unsigned int iostate;
  static constexpr iostate goodbit = 0, badbit = 1, eofbit = 2, failbit = 4;
  typedef unsigned int openmode;
  static constexpr openmode app = 1, ate = 2, binary = 4, in = 8, out = 16, trunc = 32;
  enum seekdir { beg = 0, cur = 1, end = 2 };
  class failure : public exception {};
  class Init { public: Init(); ~Init(); };
  fmtflags flags() const __C2T_BODY
  fmtflags flags(fmtflags f) __C2T_BODY
  fmtflags setf(fmtflags f) __C2T_BODY
  fmtflags setf(fmtflags f, fmtflags mask) __C2T_BODY
  void unsetf(fmtflags mask) __C2T_BODY
  streamsize precision() const __C2T_BODY
  streamsize precision(streamsize p) __C2T_BODY
  streamsize width() const __C2T_BODY
  streamsize width(streamsize w) __C2T_BODY
  static bool sync_with_stdio(bool sync = true) __C2T_BODY
  virtual ~ios_base() __C2T_BODY

 protected:
  ios_base() __C2T_BODY
};
class streambuf {
 public:
  virtual ~streambuf() __C2T_BODY
  int pubsync() __C2T_BODY
  streamsize in_avail() __C2T_BODY
  int sgetc() __C2T_BODY
  int sbumpc() __C2T_BODY
  int sputc(char c) __C2T_BODY
  streamsize sputn(const char *s, streamsize n) __C2T_BODY

 protected:
  streambuf() __C2T_BODY
};
class ostream;
class ios : public ios_base {
 public:
  explicit operator bool() const __C2T_BODY
  bool operator!() const __C2T_BODY
  iostate rdstate() const __C2T_BODY
  void setstate(iostate state) __C2T_BODY
  void clear(iostate state = goodbit) __C2T_BODY
  bool good() const __C2T_BODY
  bool eof() const __C2T_BODY
  bool fail() const __C2T_BODY
  bool bad() const __C2T_BODY
  iostate exceptions() const __C2T_BODY
  void exceptions(iostate except) __C2T_BODY
  char fill() const __C2T_BODY
  char fill(char c) __C2T_BODY
  streambuf *rdbuf() const __C2T_BODY
  streambuf *rdbuf(streambuf *sb) __C2T_BODY
  ostream *tie() const __C2T_BODY
  ostream *tie(ostream *s) __C2T_BODY
  ios &copyfmt(const ios &rhs) __C2T_BODY

 protected:
  ios() __C2T_BODY
};

class ostream : virtual public ios {
 public:
  explicit ostream(streambuf *sb) __C2T_BODY
  virtual ~ostream() __C2T_BODY
  ostream &operator<<(bool v) __C2T_BODY
  ostream &operator<<(short v) __C2T_BODY
  ostream &operator<<(unsigned short v) __C2T_BODY
  ostream &operator<<(int v) __C2T_BODY
  ostream &operator<<(unsigned int v) __C2T_BODY
  ostream &operator<<(long v) __C2T_BODY
  ostream &operator<<(unsigned long v) __C2T_BODY
  ostream &operator<<(long long v) __C2T_BODY
  ostream &operator<<(unsigned long long v) __C2T_BODY
  ostream &operator<<(float v) __C2T_BODY
  ostream &operator<<(double v) __C2T_BODY
  ostream &operator<<(long double v) __C2T_BODY
  ostream &operator<<(const void *p) __C2T_BODY
  ostream &operator<<(decltype(nullptr)) __C2T_BODY
  ostream &operator<<(streambuf *sb) __C2T_BODY
  ostream &operator<<(ostream &(*pf)(ostream &)) __C2T_BODY
  ostream &operator<<(ios &(*pf)(ios &)) __C2T_BODY
  ostream &operator<<(ios_base &(*pf)(ios_base &)) __C2T_BODY
  ostream &put(char c) __C2T_BODY
  ostream &write(const char *s, streamsize n) __C2T_BODY
  ostream &flush() __C2T_BODY
  streampos tellp() __C2T_BODY
  ostream &seekp(streampos pos) __C2T_BODY
  ostream &seekp(streamoff off, ios_base::seekdir dir) __C2T_BODY
  class sentry { public: explicit sentry(ostream &os); ~sentry(); explicit operator bool() const; };

 protected:
  ostream() __C2T_BODY
};
ostream &operator<<(ostream &os, char c) __C2T_BODY
ostream &operator<<(ostream &os, signed char c) __C2T_BODY
ostream &operator<<(ostream &os, unsigned char c) __C2T_BODY
ostream &operator<<(ostream &os, const char *s) __C2T_BODY
ostream &operator<<(ostream &os, const signed char *s) __C2T_BODY
ostream &operator<<(ostream &os, const unsigned char *s) __C2T_BODY
template <class C, class Tr, class A> ostream &operator<<(ostream &os, const basic_string<C, Tr, A> &s) __C2T_BODY

class istream : virtual public ios {
 public:
  explicit istream(streambuf *sb) __C2T_BODY
  virtual ~istream() __C2T_BODY
  istream &operator>>(bool &v) __C2T_BODY
  istream &operator>>(short &v) __C2T_BODY
  istream &operator>>(unsigned short &v) __C2T_BODY
  istream &operator>>(int &v) __C2T_BODY
  istream &operator>>(unsigned int &v) __C2T_BODY
  istream &operator>>(long &v) __C2T_BODY
  istream &operator>>(unsigned long &v) __C2T_BODY
  istream &operator>>(long long &v) __C2T_BODY
  istream &operator>>(unsigned long long &v) __C2T_BODY
  istream &operator>>(float &v) __C2T_BODY
  istream &operator>>(double &v) __C2T_BODY
  istream &operator>>(long double &v) __C2T_BODY
  istream &operator>>(void *&p) __C2T_BODY
  istream &operator>>(streambuf *sb) __C2T_BODY
  istream &operator>>(istream &(*pf)(istream &)) __C2T_BODY
  istream &operator>>(ios &(*pf)(ios &)) __C2T_BODY
  istream &operator>>(ios_base &(*pf)(ios_base &)) __C2T_BODY
  streamsize gcount() const __C2T_BODY
  int get() __C2T_BODY
  istream &get(char &c) __C2T_BODY
  istream &get(char *s, streamsize n) __C2T_BODY
  istream &get(char *s, streamsize n, char delim) __C2T_BODY
  istream &getline(char *s, streamsize n) __C2T_BODY
  istream &getline(char *s, streamsize n, char delim) __C2T_BODY
  istream &ignore(streamsize n = 1, int delim = EOF) __C2T_BODY
  int peek() __C2T_BODY
  istream &read(char *s, streamsize n) __C2T_BODY
  streamsize readsome(char *s, streamsize n) __C2T_BODY
  istream &putback(char c) __C2T_BODY
  istream &unget() __C2T_BODY
  int sync() __C2T_BODY
  streampos tellg() __C2T_BODY
  istream &seekg(streampos pos) __C2T_BODY
  istream &seekg(streamoff off, ios_base::seekdir dir) __C2T_BODY

 protected:
  istream() __C2T_BODY
};
istream &operator>>(istream &is, char &c) __C2T_BODY
istream &operator>>(istream &is, signed char &c) __C2T_BODY
istream &operator>>(istream &is, unsigned char &c) __C2T_BODY
template <class C, class Tr, class A> istream &operator>>(istream &is, basic_string<C, Tr, A> &s) __C2T_BODY
istream &getline(istream &is, string &s) __C2T_BODY
istream &getline(istream &is, string &s, char delim) __C2T_BODY
istream &ws(istream &is) __C2T_BODY

class iostream : public istream, public ostream {
 public:
  explicit iostream(streambuf *sb) __C2T_BODY
  virtual ~iostream() __C2T_BODY

 protected:
  iostream() __C2T_BODY
};
extern istream cin;
extern ostream cout;
extern ostream cerr;
extern ostream clog;
static ios_base::Init __c2t_ioinit;

// ---- manipulators ------------------------------------------------------------------------------
ostream &endl(ostream &os) __C2T_BODY
ostream &ends(ostream &os) __C2T_BODY
ostream &flush(ostream &os) __C2T_BODY
#define __C2T_MANIP(name) ios_base &name(ios_base &str);
__C2T_MANIP(boolalpha) __C2T_MANIP(noboolalpha) __C2T_MANIP(showbase) __C2T_MANIP(noshowbase)
__C2T_MANIP(showpoint) __C2T_MANIP(noshowpoint) __C2T_MANIP(showpos) __C2T_MANIP(noshowpos)
__C2T_MANIP(skipws) __C2T_MANIP(noskipws) __C2T_MANIP(uppercase) __C2T_MANIP(nouppercase)
__C2T_MANIP(unitbuf) __C2T_MANIP(nounitbuf) __C2T_MANIP(internal) __C2T_MANIP(left) __C2T_MANIP(right)
__C2T_MANIP(dec) __C2T_MANIP(hex) __C2T_MANIP(oct) __C2T_MANIP(fixed) __C2T_MANIP(scientific)
__C2T_MANIP(hexfloat) __C2T_MANIP(defaultfloat)
#undef __C2T_MANIP
// <iomanip>
struct __c2t_setw { int n; };
struct __c2t_setprecision { int n; };
struct __c2t_setfill { char c; };
struct __c2t_setbase { int base; };
struct __c2t_setiosflags { ios_base::fmtflags mask; };
struct __c2t_resetiosflags { ios_base::fmtflags mask; };
struct __c2t_put_time { const struct tm *t; const char *fmt; };
template <class S> struct __c2t_quoted { S s; char delim; char escape; };
__c2t_setw setw(int n) __C2T_BODY
__c2t_setprecision setprecision(int n) __C2T_BODY
__c2t_setfill setfill(char c) __C2T_BODY
__c2t_setbase setbase(int base) __C2T_BODY
__c2t_setiosflags setiosflags(ios_base::fmtflags mask) __C2T_BODY
__c2t_resetiosflags resetiosflags(ios_base::fmtflags mask) __C2T_BODY
__c2t_put_time put_time(const struct tm *t, const char *fmt) __C2T_BODY
__c2t_quoted<const char *> quoted(const char *s, char delim = '"', char escape = '\\') __C2T_BODY
__c2t_quoted<const string &> quoted(const string &s, char delim = '"', char escape = '\\') __C2T_BODY
__c2t_quoted<string &> quoted(string &s, char delim = '"', char escape = '\\') __C2T_BODY
ostream &operator<<(ostream &os, __c2t_setw m) __C2T_BODY
ostream &operator<<(ostream &os, __c2t_setprecision m) __C2T_BODY
ostream &operator<<(ostream &os, __c2t_setfill m) __C2T_BODY
ostream &operator<<(ostream &os, __c2t_setbase m) __C2T_BODY
ostream &operator<<(ostream &os, __c2t_setiosflags m) __C2T_BODY
ostream &operator<<(ostream &os, __c2t_resetiosflags m) __C2T_BODY
ostream &operator<<(ostream &os, __c2t_put_time m) __C2T_BODY
template <class S> ostream &operator<<(ostream &os, const __c2t_quoted<S> &m) __C2T_BODY
istream &operator>>(istream &is, __c2t_setw m) __C2T_BODY
istream &operator>>(istream &is, __c2t_setprecision m) __C2T_BODY
istream &operator>>(istream &is, __c2t_setfill m) __C2T_BODY
istream &operator>>(istream &is, __c2t_setbase m) __C2T_BODY
istream &operator>>(istream &is, __c2t_setiosflags m) __C2T_BODY
istream &operator>>(istream &is, __c2t_resetiosflags m) __C2T_BODY
template <class S> istream &operator>>(istream &is, const __c2t_quoted<S> &m) __C2T_BODY

// ---- <sstream> ---------------------------------------------------------------------------------
class stringbuf : public streambuf {
 public:
  explicit stringbuf(ios_base::openmode mode = ios_base::in | ios_base::out) __C2T_BODY
  explicit stringbuf(const string &s, ios_base::openmode mode = ios_base::in | ios_base::out) __C2T_BODY
  string str() const __C2T_BODY
  void str(const string &s) __C2T_BODY
};
#define __C2T_SSTREAM(name, base, mode)                                                        \
  class name : public base {                                                                   \
   public:                                                                                     \
    name();                                                                                    \
    explicit name(ios_base::openmode m);                                                       \
    explicit name(const string &s, ios_base::openmode m = mode);                               \
    name(name &&other);                                                                        \
    name &operator=(name &&other);                                                             \
    stringbuf *rdbuf() const;                                                                  \
    string str() const;                                                                        \
    void str(const string &s);                                                                 \
    void swap(name &other);                                                                    \
  };
__C2T_SSTREAM(istringstream, istream, ios_base::in)
__C2T_SSTREAM(ostringstream, ostream, ios_base::out)
__C2T_SSTREAM(stringstream, iostream, ios_base::in | ios_base::out)
#undef __C2T_SSTREAM

// ---- <fstream> ---------------------------------------------------------------------------------
class filebuf : public streambuf {
 public:
  filebuf() __C2T_BODY
  bool is_open() const __C2T_BODY
  filebuf *open(const char *s, ios_base::openmode mode) __C2T_BODY
  filebuf *open(const string &s, ios_base::openmode mode) __C2T_BODY
  filebuf *close() __C2T_BODY
};
#define __C2T_FSTREAM(name, base, mode)                                                        \
  class name : public base {                                                                   \
   public:                                                                                     \
    name();                                                                                    \
    explicit name(const char *s, ios_base::openmode m = mode);                                 \
    explicit name(const string &s, ios_base::openmode m = mode);                               \
    name(name &&other);                                                                        \
    name &operator=(name &&other);                                                             \
    filebuf *rdbuf() const;                                                                    \
    bool is_open() const;                                                                      \
    void open(const char *s, ios_base::openmode m = mode);                                     \
    void open(const string &s, ios_base::openmode m = mode);                                   \
    void close();                                                                              \
    void swap(name &other);                                                                    \
  };
__C2T_FSTREAM(ifstream, istream, ios_base::in)
__C2T_FSTREAM(ofstream, ostream, ios_base::out)
__C2T_FSTREAM(fstream, iostream, ios_base::in | ios_base::out)
#undef __C2T_FSTREAM

// ---- stream iterators --------------------------------------------------------------------------
template <class T, class C = char, class Tr = char_traits<C>, class D = ptrdiff_t> class istream_iterator {
 public:
  typedef input_iterator_tag iterator_category;
  typedef T value_type;
  typedef D difference_type;
  typedef const T *pointer;
  typedef const T &reference;
  istream_iterator() __C2T_BODY
  istream_iterator(istream &s) __C2T_BODY
  const T &operator*() const __C2T_BODY
  const T *operator->() const __C2T_BODY
  istream_iterator &operator++() __C2T_BODY
  istream_iterator operator++(int) __C2T_BODY
  bool operator==(const istream_iterator &o) const __C2T_BODY
  bool operator!=(const istream_iterator &o) const __C2T_BODY
};
template <class T, class C = char, class Tr = char_traits<C>> class ostream_iterator {
 public:
  typedef output_iterator_tag iterator_category;
  typedef void value_type;
  typedef ptrdiff_t difference_type;
  typedef void pointer;
  typedef void reference;
  ostream_iterator(ostream &s) __C2T_BODY
  ostream_iterator(ostream &s, const C *delimiter) __C2T_BODY
  ostream_iterator &operator=(const T &value) __C2T_BODY
  ostream_iterator &operator*() __C2T_BODY
  ostream_iterator &operator++() __C2T_BODY
  ostream_iterator &operator++(int) __C2T_BODY
};
template <class C, class Tr = char_traits<C>> class istreambuf_iterator {
 public:
  typedef input_iterator_tag iterator_category;
  typedef C value_type;
  typedef long long difference_type;
  typedef C *pointer;
  typedef C reference;
  istreambuf_iterator() noexcept __C2T_BODY
  istreambuf_iterator(istream &s) noexcept __C2T_BODY
  istreambuf_iterator(streambuf *s) noexcept __C2T_BODY
  C operator*() const __C2T_BODY
  istreambuf_iterator &operator++() __C2T_BODY
  istreambuf_iterator operator++(int) __C2T_BODY
  bool equal(const istreambuf_iterator &b) const __C2T_BODY
  bool operator==(const istreambuf_iterator &b) const __C2T_BODY
  bool operator!=(const istreambuf_iterator &b) const __C2T_BODY
};
template <class C, class Tr = char_traits<C>> class ostreambuf_iterator {
 public:
  typedef output_iterator_tag iterator_category;
  typedef void value_type;
  typedef void difference_type;
  typedef void pointer;
  typedef void reference;
  ostreambuf_iterator(ostream &s) noexcept __C2T_BODY
  ostreambuf_iterator &operator=(C c) __C2T_BODY
  ostreambuf_iterator &operator*() __C2T_BODY
  ostreambuf_iterator &operator++() __C2T_BODY
  ostreambuf_iterator &operator++(int) __C2T_BODY
};
}
#endif
