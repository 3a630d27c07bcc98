"""The built-in solvers and how solvers are found by name: each built-in solver a recipe whose signature holds its
defaults and whose body is its chain of parts (:mod:`.solvers`, :mod:`.sign_solvers`, the descent solvers' shared
pieces in :mod:`.descent`, the search over sign vectors with its own parts in :mod:`.sign_flips`), the registry
(:mod:`.registry`), solvers from outside zeroopt (:mod:`.plugins`) and the page of every built-in chain
(:mod:`.catalogue`).
"""
