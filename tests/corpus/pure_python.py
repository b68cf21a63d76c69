"""Pure-Python corpus: functions without tensors.

Traced by minidynamo they must return exactly what CPython returns, leave their
inputs exactly as CPython leaves them, and capture no graph. Every function here is
also checked on TorchDynamo (``tests/conformance/test_corpus_sanity.py``): it traces
with ``fullgraph=True``, captures no graph and reports no graph break, so nothing
here relies on a feature TorchDynamo does not support.

Sections follow the bytecode they exercise: arithmetic, strings, containers,
unpacking, control flow, comprehensions, functions and closures, builtins,
namedtuples and user classes, mutation of inputs.
"""

from __future__ import annotations

import collections
import math
import operator

from . import Registry

CASES = Registry()
case = CASES.case

SCALE = 3  # a global constant, read by some functions
NAMES = ("ada", "bob", "cy")


## Arithmetic ##########################################################################


@case(3, 4)
@case(-7, 2)
def int_arithmetic(a, b):
    return a + b, a - b, a * b, a // b, a % b, a**2, -a, +b


@case(7.5, 2.0)
@case(-1.25, 0.5)
def float_arithmetic(a, b):
    return a + b, a - b, a * b, a / b, a // b, a % b, a**2


@case(12, 10)
def bitwise(a, b):
    return a & b, a | b, a ^ b, ~a, a << 2, a >> 1


@case(3, 2.5)
def mixed_int_float(a, b):
    return a * b, a / 2, type(a + b).__name__


@case(10)
def augmented_assignment(n):
    n += 5
    n -= 2
    n *= 3
    n //= 4
    n %= 7
    n **= 2
    n <<= 1
    n |= 1
    return n


@case(17, 5)
def divmod_and_pow(a, b):
    return divmod(a, b), pow(a, 2), pow(a, 2, b)


@case(-3.7)
@case(2.5)
def rounding(x):
    return round(x), round(x, 1), abs(x), int(x), math.floor(x), math.ceil(x)


@case(16.0)
def math_module(x):
    return math.sqrt(x), math.log2(x), math.pi * 2, math.isclose(x, 16.0)


@case(1, 2, 3)
def operator_module(a, b, c):
    return operator.add(a, b), operator.mul(b, c), operator.neg(a), operator.lt(a, c)


@case(True, False)
def boolean_arithmetic(p, q):
    return p + q, p and q, p or q, not p, p == 1, int(q)


@case(3)
def integer_true_division(n):
    return n / 2, n / 3 * 3, 7 / n


@case(0, 5)
@case(4, 0)
def short_circuit_values(a, b):
    return a or b, a and b, (a or None), (b and "yes")


@case(2, 3, 4)
def operator_precedence(a, b, c):
    return a + b * c, (a + b) * c, a**b**2 // c, -a**2, a - b - c


@case(255)
def int_conversions(n):
    return bin(n), hex(n), oct(n), int("ff", 16), float(n), str(n)


@case(10, 3)
def float_conversions(a, b):
    return float(a) / b, int(a / b), float("1.5") + a, bool(a - 10)


## Strings #############################################################################


@case("Hello", "World")
def string_concatenation(a, b):
    return a + ", " + b + "!", a * 2, len(a + b)


@case("  Mixed Case Text ")
def string_methods(s):
    return s.strip(), s.lower(), s.upper(), s.title(), s.replace("e", "3"), s.strip().swapcase()


@case("a,b,,c")
def string_split_join(s):
    parts = s.split(",")
    return parts, "-".join(parts), "|".join(reversed(parts)), s.split(",", 1)


@case("minidynamo")
def string_slicing(s):
    return s[0], s[-1], s[1:4], s[::-1], s[::2], s[-4:], s[:100]


@case("banana")
def string_search(s):
    return s.find("an"), s.rfind("an"), s.count("a"), s.index("n"), s.startswith("ba"), s.endswith("na")


@case("abc", 3, 2.5)
def fstrings(name, n, x):
    return f"{name}:{n}", f"{name!r}", f"{x:.3f}", f"{n:04d}", f"{n * x}", f"{name:>6}|"


@case("hello world")
def string_in(s):
    return "world" in s, "xyz" in s, "o w" not in s, "" in s


@case("ab", "abc")
def string_comparisons(a, b):
    return a < b, a == b[:2], a != b, max(a, b), min(a, b), sorted([b, a, "aa"])


@case("x", 3)
def string_format_method(name, n):
    return "{}={}".format(name, n), "{0}{0}{1}".format(name, n), "%s:%d" % (name, n)


@case("  padded  ")
def string_checks(s):
    t = s.strip()
    return t.isalpha(), t.isdigit(), "12".isdigit(), t.isupper(), t.center(10, "*"), t.zfill(8)


@case("one two  three")
def string_words(s):
    words = s.split()
    return len(words), [w.capitalize() for w in words], " ".join(words[::-1])


@case("a=1;b=2;c=3")
def parse_pairs(s):
    result = {}
    for item in s.split(";"):
        key, value = item.split("=")
        result[key] = int(value)
    return result


@case("Mississippi")
def char_frequencies(s):
    counts = {}
    for ch in s.lower():
        counts[ch] = counts.get(ch, 0) + 1
    return counts


@case(["b", "a", "c"])
def string_ord_chr(chars):
    return [ord(c) for c in chars], [chr(ord(c) + 1) for c in chars], "".join(chars)


@case("racecar")
@case("python")
def is_palindrome(s):
    return s == s[::-1]


## Containers ##########################################################################


@case([3, 1, 2])
def list_methods(items):
    items = list(items)
    items.append(10)
    items.extend([7, 8])
    items.insert(0, -1)
    popped = items.pop()
    items.remove(3)
    items.sort()
    return items, popped, items.index(7), items.count(1)


@case([1, 2, 3, 4, 5, 6])
def list_slicing(items):
    return items[1:3], items[::-1], items[::2], items[-2:], items[:-4], items[1:-1:2]


@case([1, 2, 3, 4, 5])
def list_slice_assignment(items):
    items = list(items)
    items[1:3] = [20, 30, 40]
    del items[0]
    items[-1] = 99
    return items


@case((1, 2, 3), (4, 5))
def tuple_operations(a, b):
    joined = a + b
    return joined, joined * 2, joined[1:4], len(joined), joined.count(2), joined.index(5)


@case({"a": 1, "b": 2})
def dict_methods(d):
    d = dict(d)
    d["c"] = 3
    d.update({"a": 10, "d": 4})
    removed = d.pop("b")
    default = d.setdefault("e", 5)
    return d, removed, default, d.get("zz", -1), list(d.keys()), list(d.values())


@case({"x": 1, "y": 2, "z": 3})
def dict_iteration(d):
    total = 0
    names = []
    for key, value in d.items():
        total += value
        names.append(key * value)
    return total, names


@case([1, 2, 2, 3, 3, 3])
def set_operations(items):
    s = set(items)
    t = {3, 4, 5}
    return sorted(s | t), sorted(s & t), sorted(s - t), sorted(s ^ t), len(s), 2 in s


@case([5, 3, 5, 1])
def set_methods(items):
    s = set()
    for item in items:
        s.add(item)
    s.discard(3)
    s.update([9, 8])
    return sorted(s), s.issubset({1, 5, 8, 9, 10}), frozenset([1, 2]) == frozenset([2, 1])


@case([[1, 2], [3, 4], [5, 6]])
def nested_lists(matrix):
    return matrix[1][0], [row[1] for row in matrix], matrix[-1][-1], len(matrix[0])


@case({"inner": {"a": [1, 2, 3]}})
def nested_dicts(d):
    return d["inner"]["a"][1], list(d["inner"]), len(d["inner"]["a"])


@case([1, 2, 3])
def list_copy_independence(items):
    copy1 = items[:]
    copy2 = list(items)
    copy1.append(4)
    copy2[0] = 0
    return items, copy1, copy2


@case([4, 1, 3])
def list_equality_and_order(a):
    b = sorted(a)
    return a == b, a < b, [1, 2] < [1, 3], (1, "a") < (1, "b"), a != b


@case(["x", "y"], [1, 2])
def dict_from_zip(keys, values):
    d = dict(zip(keys, values))
    return d, dict(a=1, b=2), dict([("k", "v")]), {**d, "z": 3}


@case({"b": 2, "a": 1})
def dict_sorted_items(d):
    return sorted(d.items()), sorted(d), sorted(d, key=lambda k: d[k])


@case([1, 2, 3])
def list_multiplication(items):
    return items * 2, [0] * 3, [[0] * 2 for _ in range(2)]


@case([("a", 1), ("b", 2)])
def list_of_tuples(pairs):
    return [name for name, _ in pairs], sum([value for _, value in pairs])


@case({"a": 1})
def dict_membership(d):
    return "a" in d, "b" in d, "b" not in d, 1 in d.values(), ("a", 1) in d.items()


@case([3, 1, 2])
def list_reverse_and_sort_methods(items):
    a = list(items)
    a.reverse()
    b = list(items)
    b.sort(reverse=True)
    c = list(items)
    c.sort(key=lambda v: -v)
    return a, b, c


@case([1, 2, 3, 4])
def list_clear_and_del(items):
    a = list(items)
    del a[1:3]
    b = list(items)
    b.clear()
    return a, b


@case((1, (2, (3, 4))))
def deep_tuple_indexing(t):
    return t[1][1][0], t[1][1], len(t[1])


@case(collections.OrderedDict([("x", 1), ("y", 2)]))
def ordered_dict(d):
    d = collections.OrderedDict(d)
    d["z"] = 3
    d.move_to_end("x")
    return list(d.items())


@case(["a", "b", "a", "c", "a"])
def counter_by_hand(words):
    counts = collections.defaultdict(int)
    for word in words:
        counts[word] += 1
    return dict(counts)


## Unpacking ###########################################################################


@case((1, 2))
def swap(pair):
    a, b = pair
    a, b = b, a
    return a, b


@case([1, 2, 3, 4, 5])
def star_unpack_middle(items):
    first, *middle, last = items
    return first, middle, last


@case([1, 2, 3])
def star_unpack_head(items):
    *head, tail = items
    return head, tail


@case([1])
def star_unpack_empty(items):
    first, *rest = items
    return first, rest


@case(((1, 2), (3, 4)))
def nested_unpack(pairs):
    (a, b), (c, d) = pairs
    return a + d, b * c


@case([1, 2], [3, 4])
def star_in_literals(a, b):
    return [*a, *b], (*a, 0), {*a, *b} == {1, 2, 3, 4}, [0, *b, 5]


@case({"a": 1}, {"b": 2, "a": 3})
def double_star_merge(a, b):
    return {**a, **b}, {**b, **a}, {"z": 0, **a}


@case([(1, "a"), (2, "b")])
def unpack_in_for(pairs):
    out = []
    for number, letter in pairs:
        out.append(letter * number)
    return out


@case("abc")
def unpack_string(s):
    a, b, c = s
    return c + b + a


@case([[1, [2, 3]], [4, [5, 6]]])
def unpack_nested_in_loop(rows):
    total = 0
    for a, (b, c) in rows:
        total += a * b - c
    return total


## Control flow ########################################################################


@case(5)
@case(-3)
@case(0)
def if_elif_else(n):
    if n > 0:
        return "positive"
    elif n < 0:
        return "negative"
    else:
        return "zero"


@case(7)
def while_loop(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@case(10)
def for_range_sum(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


@case(20)
def break_and_continue(n):
    found = []
    for i in range(n):
        if i % 3 == 0:
            continue
        if i > 14:
            break
        found.append(i)
    return found


@case([1, 3, 5])
@case([1, 4, 5])
def for_else(items):
    for item in items:
        if item % 2 == 0:
            result = f"even {item}"
            break
    else:
        result = "all odd"
    return result


@case(4)
def nested_loops(n):
    pairs = []
    for i in range(n):
        for j in range(i):
            pairs.append((i, j))
    return pairs


@case(3, 7)
def chained_comparisons(a, b):
    return 0 < a < b, a < b < 5, 1 <= a <= 3 <= b, a == 3 != b, a < b > 10


@case(5)
def ternary(n):
    kind = "big" if n > 3 else "small"
    parity = "even" if n % 2 == 0 else "odd"
    return kind, parity, (n if n < 10 else 10)


@case(3)
@case(None)
def is_none(value):
    return value is None, value is not None, (value or 0) + 1


@case(12)
def while_with_break(n):
    i = 0
    while True:
        i += 1
        if i * i > n:
            break
    return i


@case(3)
def range_variants(n):
    return list(range(n)), list(range(1, 10, n)), list(range(10, 0, -n)), len(range(0, 100, 7))


@case(8)
def fizzbuzz(n):
    out = []
    for i in range(1, n + 1):
        if i % 15 == 0:
            out.append("FizzBuzz")
        elif i % 3 == 0:
            out.append("Fizz")
        elif i % 5 == 0:
            out.append("Buzz")
        else:
            out.append(str(i))
    return out


@case([4, 8, 15, 16, 23, 42], 23)
def binary_search(items, target):
    low, high = 0, len(items) - 1
    while low <= high:
        mid = (low + high) // 2
        if items[mid] == target:
            return mid
        if items[mid] < target:
            low = mid + 1
        else:
            high = mid - 1
    return -1


@case([5, 2, 9, 1, 5, 6])
def bubble_sort(items):
    items = list(items)
    for i in range(len(items)):
        for j in range(len(items) - 1 - i):
            if items[j] > items[j + 1]:
                items[j], items[j + 1] = items[j + 1], items[j]
    return items


@case(30)
def primes_sieve(n):
    is_prime = [True] * (n + 1)
    is_prime[0] = is_prime[1] = False
    for i in range(2, n + 1):
        if is_prime[i]:
            for j in range(i * i, n + 1, i):
                is_prime[j] = False
    return [i for i in range(n + 1) if is_prime[i]]


@case(10)
def fibonacci_loop(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


@case(48, 18)
def gcd_loop(a, b):
    while b:
        a, b = b, a % b
    return a, math.gcd(48, 18)


@case([1, 2, 3])
@case([])
def empty_check(items):
    if not items:
        return "empty"
    if len(items) > 2 and items[0] == 1:
        return "long"
    return "short"


@case(6)
def nested_if_in_loop(n):
    result = []
    for i in range(n):
        if i % 2 == 0:
            if i % 4 == 0:
                result.append("quad")
            else:
                result.append("even")
        else:
            result.append("odd")
    return result


@case({"a": 1, "b": None, "c": 3})
def skip_none_values(d):
    out = {}
    for key in d:
        if d[key] is None:
            continue
        out[key] = d[key] * 2
    return out


@case(2, 3)
def try_except_no_raise(a, b):
    try:
        value = a * b
    except ZeroDivisionError:
        value = -1
    return value


@case(4)
def try_finally(n):
    log = []
    try:
        log.append(n)
    finally:
        log.append("done")
    return log


## Comprehensions ######################################################################


@case(6)
def list_comprehension(n):
    return [i * i for i in range(n)], [i for i in range(n) if i % 2]


@case(["a", "bb", "ccc"])
def dict_comprehension(words):
    return {w: len(w) for w in words}, {i: w for i, w in enumerate(words) if i != 1}


@case([1, 2, 2, 3, 3, 3])
def set_comprehension(items):
    return sorted({x % 2 for x in items}), len({x for x in items})


@case(3)
def nested_comprehension(n):
    return [(i, j) for i in range(n) for j in range(i)], [[i * j for j in range(n)] for i in range(n)]


@case([[1, 2], [3], [4, 5, 6]])
def flatten_comprehension(rows):
    return [x for row in rows for x in row]


@case(5)
def comprehension_with_condition_expression(n):
    return ["even" if i % 2 == 0 else "odd" for i in range(n)]


@case(10, 3)
def comprehension_closes_over_argument(n, k):
    return [i for i in range(n) if i % k == 0]


@case({"a": 1, "b": 2})
def invert_dict(d):
    return {v: k for k, v in d.items()}


@case(["x", "y"], [1, 2, 3])
def comprehension_cartesian(letters, numbers):
    return [f"{a}{b}" for a in letters for b in numbers if b != 2]


@case([3, -1, 4, -1, 5])
def comprehension_filters(items):
    positives = [x for x in items if x > 0]
    return positives, [abs(x) for x in items], sum([x for x in items if x < 0])


## Functions, closures, arguments ######################################################


def _square(x):
    return x * x


def _apply(f, value):
    return f(value)


@case(4)
def call_global_function(n):
    return _square(n) + _apply(_square, n + 1)


@case(5)
def nested_function(n):
    def double(x):
        return 2 * x

    return double(n) + double(1)


@case(10)
def closure_reads(n):
    offset = 3

    def add(x):
        return x + offset + n

    return add(1), add(2)


@case(3)
def closure_writes_nonlocal(n):
    count = 0

    def bump(by):
        nonlocal count
        count += by
        return count

    bump(n)
    bump(2)
    return count


@case(2)
def make_adder_returns_closure_result(n):
    def make_adder(k):
        def add(x):
            return x + k

        return add

    add5 = make_adder(5)
    return add5(n), make_adder(n)(n)


@case(3)
def lambda_functions(n):
    square = lambda x: x * x  # noqa: E731 - a lambda is the point
    return square(n), (lambda a, b=2: a * b)(n), sorted([3, 1, 2], key=lambda v: -v)


def _defaults(a, b=10, c="c"):
    return a, b, c


@case(1)
def default_arguments(n):
    return _defaults(n), _defaults(n, 2), _defaults(n, c="z"), _defaults(a=n, b=0)


def _keyword_only(a, *, scale=2, shift=0):
    return a * scale + shift


@case(4)
def keyword_only_arguments(n):
    return _keyword_only(n), _keyword_only(n, scale=3), _keyword_only(n, shift=1, scale=1)


def _star_args(*args):
    return len(args), sum(args), args


@case(1, 2, 3)
def star_args_call(a, b, c):
    values = [a, b, c]
    return _star_args(), _star_args(a), _star_args(*values), _star_args(a, *values[1:])


def _star_kwargs(**kwargs):
    return sorted(kwargs.items())


@case({"x": 1, "y": 2})
def star_kwargs_call(d):
    return _star_kwargs(), _star_kwargs(a=1), _star_kwargs(**d), _star_kwargs(z=0, **d)


def _everything(a, b=2, *rest, key="k", **extra):
    return a, b, rest, key, sorted(extra)


@case(1)
def mixed_signature_call(n):
    return _everything(n), _everything(n, 3, 4, 5, key="q", other=1), _everything(*[n, 9], **{"w": 2})


@case(1, 2, 3, scale=10)
def variadic_entry(*args, scale=1):
    return [a * scale for a in args]


@case(a=1, b=2)
def kwargs_entry(**kwargs):
    return {k: v + 1 for k, v in kwargs.items()}


@case(2, 3, 4, 5, flag=True, name="n")
def everything_entry(a, b=0, *rest, flag=False, **extra):
    return a + b, rest, flag, extra


def _factorial(n):
    return 1 if n <= 1 else n * _factorial(n - 1)


@case(6)
def recursion_factorial(n):
    return _factorial(n)


def _fib(n):
    if n < 2:
        return n
    return _fib(n - 1) + _fib(n - 2)


@case(7)
def recursion_fibonacci(n):
    return _fib(n)


def _depth(nested):
    if not isinstance(nested, list):
        return 0
    return 1 + max([_depth(item) for item in nested] + [0])


@case([1, [2, [3, [4]]], []])
def recursion_on_structure(nested):
    return _depth(nested)


@case(3)
def higher_order_functions(n):
    def compose(f, g):
        return lambda x: f(g(x))

    inc = lambda x: x + 1  # noqa: E731
    return compose(inc, _square)(n), compose(_square, inc)(n)


@case(4)
def function_as_value(n):
    table = {"sq": _square, "neg": operator.neg, "id": lambda x: x}
    return {name: f(n) for name, f in table.items()}


@case(5)
def reads_global_constants(n):
    return n * SCALE, NAMES[n % 3], len(NAMES)


@case(3)
def closure_over_loop_variable(n):
    functions = []
    for i in range(n):
        functions.append(lambda x, i=i: x + i)
    return [f(10) for f in functions]


@case(2)
def nested_closures(n):
    a = 1

    def outer():
        b = 2

        def inner():
            return a + b + n

        return inner()

    return outer()


@case([3, 1, 2])
def map_filter(items):
    squares = list(map(_square, items))
    return squares, list(filter(lambda v: v > 1, items)), list(map(operator.add, items, squares))


def _returns_multiple(n):
    return n, n * 2, n * 3


@case(2)
def multiple_return_values(n):
    a, b, c = _returns_multiple(n)
    whole = _returns_multiple(n + 1)
    return a + b + c, whole


## Builtins ############################################################################


@case([3, 1, 4, 1, 5])
def min_max_sum_len(items):
    return min(items), max(items), sum(items), len(items), sum(items, 10)


@case(["pear", "fig", "banana"])
def min_max_with_key(words):
    return min(words, key=len), max(words, key=len), max(3, 7, 5), min(2.5, 1)


@case(["a", "b", "c"])
def enumerate_builtin(items):
    return list(enumerate(items)), list(enumerate(items, start=1)), [i for i, _ in enumerate(items)]


@case([1, 2, 3], ["a", "b", "c", "d"])
def zip_builtin(a, b):
    return list(zip(a, b)), [x * y for x, y in zip(a, a)], list(zip(a, b, a))


@case([3, 1, 2])
def sorted_and_reversed(items):
    return sorted(items), sorted(items, reverse=True), list(reversed(items)), list(reversed(range(3)))


@case([0, 1, 2])
def any_all(items):
    return any(items), all(items), any([]), all([]), all([x >= 0 for x in items])


@case(3, "s", [1], {"a": 1})
def isinstance_checks(n, s, lst, d):
    simple = isinstance(n, int), isinstance(s, str), isinstance(n, float)
    return simple, isinstance(lst, (list, tuple)), isinstance(d, dict)


@case(5, "x", [1])
def type_checks(n, s, lst):
    return type(n) is int, type(s) == str, type(lst).__name__, callable(len), callable(n)


@case(3.7, -2)
def abs_round_builtins(x, n):
    return abs(n), round(x, 0), round(2.5), round(3.5), max(abs(n), 1)


@case([1, 2, 3])
def len_and_bool_of_containers(items):
    return bool(items), bool([]), len({}), bool(""), bool("a"), len(items[1:])


@case([("b", 2), ("a", 2), ("c", 1)])
def sorted_with_tuple_key(pairs):
    return sorted(pairs, key=lambda p: (p[1], p[0])), sorted(pairs, key=operator.itemgetter(1))


@case(["3", "10", "2"])
def conversions_in_loop(values):
    return sorted(values), sorted([int(v) for v in values])


@case(10)
def list_tuple_constructors(n):
    return list(range(n))[-3:], tuple([1, 2]), list("abc"), tuple("xy"), list({"k": 1})


@case([1, 2, 3], 2)
def contains_operators(items, value):
    return value in items, value not in items, 9 in items, (1, 2) in [(1, 2)]


@case(3)
def getattr_builtins(n):
    return getattr(n, "real"), hasattr("s", "upper"), hasattr(n, "nope"), getattr(n, "nope", "default")


@case([4, 2, 7])
def sum_of_floats_and_ints(items):
    return sum([x / 2 for x in items]), sum(items) / len(items), float(sum(items))


@case([1, 2, 3, 4])
def iter_and_next(items):
    it = iter(items)
    first = next(it)
    second = next(it)
    return first, second, list(it)


@case(3)
def identity_checks(n):
    a = [n]
    b = a
    c = [n]
    return a is b, a is c, a == c, None is None


@case(5)
def slicing_with_slice_objects(n):
    items = list(range(10))
    s = slice(1, n, 2)
    return items[s], items[slice(None, None, -3)], s.start


## Namedtuples and user classes ########################################################

Point = collections.namedtuple("Point", ["x", "y"])
Pair = collections.namedtuple("Pair", "left right")


@case(Point(1, 2))
def namedtuple_fields(p):
    return p.x + p.y, p[0], len(p), tuple(p)


@case(3, 4)
def namedtuple_create(x, y):
    p = Point(x, y)
    q = Point(y=x, x=y)
    return p, q, p == (3, 4)


@case(Point(5, 6))
def namedtuple_unpack_and_replace(p):
    x, y = p
    return x * y, p._replace(x=0), p._fields


@case([Point(1, 2), Point(3, 4)])
def namedtuple_list(points):
    return sum([p.x for p in points]), [Pair(p.y, p.x) for p in points]


class Counter:
    """A simple user class with state and methods."""

    kind = "counter"

    def __init__(self, start=0):
        self.value = start

    def bump(self, by=1):
        self.value += by
        return self.value

    @property
    def doubled(self):
        return self.value * 2


class Vector:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vector(self.x + other.x, self.y + other.y)

    def __eq__(self, other):
        return isinstance(other, Vector) and (self.x, self.y) == (other.x, other.y)

    def __len__(self):
        return 2

    def norm2(self):
        return self.x * self.x + self.y * self.y


class Shape:
    def area(self):
        return 0

    def describe(self):
        return f"{type(self).__name__} with area {self.area()}"


class Square(Shape):
    def __init__(self, side):
        self.side = side

    def area(self):
        return self.side**2


class Rectangle(Square):
    def __init__(self, width, height):
        super().__init__(width)
        self.height = height

    def area(self):
        return self.side * self.height


@case(5)
def user_class_create_and_call(n):
    c = Counter(n)
    c.bump()
    c.bump(by=3)
    return c.value, c.doubled, c.kind, Counter.kind


@case(Counter(2))
def user_class_argument_read(c):
    return c.value + 1, c.doubled, getattr(c, "value"), isinstance(c, Counter)


@case(1, 2)
def user_class_dunder_methods(x, y):
    v = Vector(x, y) + Vector(10, 20)
    return v.x, v.y, v.norm2(), len(v), v == Vector(11, 22)


@case(3)
def inheritance_and_super(n):
    rectangle = Rectangle(1, n)
    return Square(n).area(), Rectangle(n, 2).area(), rectangle.describe(), isinstance(rectangle, Shape)


@case(4)
def user_object_returned(n):
    c = Counter(n)
    c.bump(2)
    return c


@case(2)
def user_object_new_attribute(n):
    c = Counter()
    c.label = "made"
    c.extra = [n, n]
    return c.label, c.extra, hasattr(c, "label")


@case([Counter(1), Counter(5)])
def list_of_user_objects(counters):
    return [c.value for c in counters], max([c.value for c in counters]), counters[-1].doubled


class Config:
    """Class attributes and classmethod/staticmethod."""

    size = 4
    names = ("a", "b")

    @classmethod
    def make(cls, factor):
        return cls.size * factor

    @staticmethod
    def helper(x):
        return x - 1


@case(3)
def classmethod_staticmethod(n):
    return Config.make(n), Config.helper(n), Config.size + n, Config.names[1]


## Mutating inputs #####################################################################


@case([1, 2])
def mutate_list_append(items):
    items.append(3)
    items.append(len(items))
    return len(items)


@case([5, 6, 7])
def mutate_list_in_place(items):
    items[0] = 50
    items.pop()
    items.insert(0, -1)
    return None


@case({"a": 1})
def mutate_dict(d):
    d["b"] = 2
    d["a"] += 10
    del d["b"]
    d["c"] = [1]
    return sorted(d)


@case(Counter(10))
def mutate_object_attribute(c):
    c.value = c.value + 5
    c.bump()
    c.note = "touched"
    return c.value


@case([[1], [2]])
def mutate_nested_list(rows):
    for row in rows:
        row.append(0)
    rows.append([])
    return len(rows)


@case({"counts": {"x": 0}})
def mutate_nested_dict(state):
    state["counts"]["x"] += 1
    state["counts"]["y"] = 2
    state["seen"] = True
    return state["counts"]


@case([3, 1, 2])
def mutate_list_sort_in_place(items):
    items.sort()
    items.reverse()
    return items[0]


@case([1, 2, 3], [4])
def mutate_extend_with_other(a, b):
    a.extend(b)
    b.clear()
    return a, b


@case({"a": 1, "b": 2})
def mutate_dict_pop_and_update(d):
    value = d.pop("a")
    d.update(z=value)
    return d


@case(Point(1, 2), [])
def mutate_list_with_namedtuple(p, out):
    out.append(p._replace(y=9))
    return out


@case(set())
def mutate_set(s):
    s.add(1)
    s.update({2, 3})
    s.discard(2)
    return len(s)


@case([0, 0, 0])
def mutate_list_in_loop(items):
    for i in range(len(items)):
        items[i] = i * i
    return sum(items)


@case([Counter(1), Counter(2)])
def mutate_objects_in_list(counters):
    for c in counters:
        c.bump(10)
    return [c.value for c in counters]


## Small algorithms ####################################################################


@case([[1, 2], [3, 4]], [[5, 6], [7, 8]])
def matrix_multiply(a, b):
    rows, inner, cols = len(a), len(b), len(b[0])
    return [[sum([a[i][k] * b[k][j] for k in range(inner)]) for j in range(cols)] for i in range(rows)]


@case([[1, 2, 3], [4, 5, 6]])
def transpose(matrix):
    return [list(col) for col in zip(*matrix)]


@case("the quick brown the lazy the")
def word_count_top(text):
    counts = {}
    for word in text.split():
        counts[word] = counts.get(word, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:2]


@case([1, 5, 2, 8, 3])
def running_max(items):
    best = items[0]
    out = []
    for item in items:
        best = max(best, item)
        out.append(best)
    return out


@case([1, 2, 3, 4, 5], 2)
def chunk_list(items, size):
    return [items[i:i + size] for i in range(0, len(items), size)]


@case([3, 7, 1, 9])
def argmax_by_hand(items):
    best_index = 0
    for index, value in enumerate(items):
        if value > items[best_index]:
            best_index = index
    return best_index


@case(5)
def pascal_triangle(n):
    rows = [[1]]
    for _ in range(n - 1):
        prev = rows[-1]
        rows.append([1] + [prev[i] + prev[i + 1] for i in range(len(prev) - 1)] + [1])
    return rows


@case([1, 2, 2, 3, 1, 4])
def dedupe_keep_order(items):
    seen = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


@case("(()())")
@case("(()")
def balanced_parens(s):
    depth = 0
    for ch in s:
        depth += 1 if ch == "(" else -1
        if depth < 0:
            return False
    return depth == 0


@case(1234)
def digit_sum(n):
    total = 0
    while n:
        total += n % 10
        n //= 10
    return total


@case([2, 7, 11, 15], 9)
def two_sum(items, target):
    seen = {}
    for index, value in enumerate(items):
        if target - value in seen:
            return seen[target - value], index
        seen[value] = index
    return None


@case([1, 2, 3, 4])
def prefix_sums(items):
    sums = [0]
    for item in items:
        sums.append(sums[-1] + item)
    return sums


@case("aaabccdddd")
def run_length_encode(s):
    out = []
    i = 0
    while i < len(s):
        j = i
        while j < len(s) and s[j] == s[i]:
            j += 1
        out.append(f"{s[i]}{j - i}")
        i = j
    return "".join(out)


@case([3, 1, 2], [6, 5, 4])
def merge_sorted(a, b):
    a, b = sorted(a), sorted(b)
    out = []
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out + a[i:] + b[j:]


@case({"a": [1, 2], "b": [3]})
def group_lengths(groups):
    return {name: len(members) for name, members in groups.items()}, sum([len(m) for m in groups.values()])


@case(4)
def identity_matrix(n):
    return [[1 if i == j else 0 for j in range(n)] for i in range(n)]


@case([0.5, 1.5, 2.5])
def mean_and_variance(values):
    mean = sum(values) / len(values)
    variance = sum([(v - mean) ** 2 for v in values]) / len(values)
    return mean, variance


@case("hello", 2)
def caesar_shift(s, k):
    return "".join([chr((ord(c) - ord("a") + k) % 26 + ord("a")) for c in s])


@case(3)
def state_machine(n):
    state = "idle"
    trail = []
    for step in range(n * 2):
        if state == "idle":
            state = "busy"
        elif state == "busy" and step % 2:
            state = "done"
        elif state == "done":
            state = "idle"
        trail.append(state)
    return trail


@case([("add", 3), ("mul", 4), ("sub", 2)])
def tiny_interpreter(program):
    acc = 1
    ops = {"add": operator.add, "mul": operator.mul, "sub": operator.sub}
    for op, value in program:
        acc = ops[op](acc, value)
    return acc


@case({"a": {"b": {"c": 1}}}, "a.b.c")
def nested_lookup(tree, path):
    node = tree
    for key in path.split("."):
        node = node[key]
    return node


@case([5, 3, 8, 1])
def selection_sort_with_swaps(items):
    items = list(items)
    swaps = 0
    for i in range(len(items)):
        smallest = min(range(i, len(items)), key=lambda k: items[k])
        if smallest != i:
            items[i], items[smallest] = items[smallest], items[i]
            swaps += 1
    return items, swaps


## Exceptions and with-blocks (chapter 8) ##############################################


class _Counter:
    """A context manager that counts entries and exits, and suppresses KeyError."""

    def __init__(self):
        self.events = []

    def __enter__(self):
        self.events.append("in")
        return len(self.events)

    def __exit__(self, exc_type, exc, tb):
        self.events.append("out" if exc_type is None else exc_type.__name__)
        return exc_type is KeyError


@case({"a": 1}, "b")
@case({"a": 1}, "a")
def lookup_or_default(table, key):
    try:
        return table[key]
    except KeyError as e:
        return ("missing", e.args)


@case(3)
@case(-1)
def raise_and_catch_value(n):
    try:
        if n < 0:
            raise ValueError("negative", n)
        result = n * 2
    except ValueError as e:
        result = e.args
    else:
        result = (result, "else")
    finally:
        n = None
    return result, n


@case([1, 2, 3])
def try_finally_order(items):
    log = []
    for item in items:
        try:
            if item == 2:
                continue
            log.append(item)
        finally:
            log.append(-item)
    return log


@case("12")
@case("x")
def parse_int(text):
    try:
        return int(text)
    except ValueError:
        return None


@case(4)
def chained_exceptions(n):
    try:
        try:
            raise KeyError(n)
        except KeyError as e:
            raise IndexError(n + 1) from e
    except IndexError as e2:
        return e2.args, e2.__cause__.args, e2.__suppress_context__


@case(2)
def context_of_raise_in_handler(n):
    try:
        try:
            raise KeyError(n)
        except KeyError:
            raise ValueError(n * 10)
    except ValueError as e:
        return e.args, type(e.__context__).__name__, e.__context__.args


@case()
def reraise_keeps_identity():
    try:
        try:
            raise LookupError("x")
        except LookupError as first:
            kept = first
            raise
    except LookupError as second:
        return second is kept, second.args


@case()
def with_counter_normal_and_suppressed():
    manager = _Counter()
    with manager as first:
        value = first * 10
    with manager:
        raise KeyError("swallowed")
    return value, manager.events


@case()
def generator_with_try_finally():
    log = []

    def gen():
        try:
            yield 1
            yield 2
        finally:
            log.append("done")

    return [v * 3 for v in gen()], log


@case()
def yield_from_chain():
    def inner():
        yield 1
        yield 2

    def outer():
        yield 0
        yield from inner()
        yield 3

    return list(outer())


@case([3, 1, 2])
def for_else_search(items):
    for item in items:
        if item > 5:
            found = item
            break
    else:
        found = None
    return found


class _Options:
    pass


@case({"x": 1})
def hasattr_getattr_defaults(config):
    options = _Options()
    options.x = config["x"]
    return hasattr(options, "x"), hasattr(options, "y"), getattr(options, "y", "dflt")
