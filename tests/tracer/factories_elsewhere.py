"""Functions that make functions, in a module of their own: the functions they make read
this module's globals (`helper`), which a test module defines differently."""


def helper(x):
    return x + 100


def make_scaled(k):
    def scaled(x):
        return helper(x) * k
    return scaled


def make_lambda():
    return lambda x: helper(x)
