"""SPSA as a zeroopt plugin: ``zeroopt.load_plugin("docs/examples/spsa_plugin.py")``, or ``--plugin
docs/examples/spsa_plugin.py`` on any command line, then ``solver="spsa"``.

Simultaneous perturbation stochastic approximation (Spall 1992): each iteration k probes x ± c_k·u along one
Rademacher direction u (±1 in every coordinate) and moves by the gain a_k along the two-sided estimate
(f(x + c_k u) − f(x − c_k u)) / (2 c_k) · u, with Spall's gain sequences a_k = a / (k + 1 + A)^α and
c_k = c / (k + 1)^γ, and his published exponents as the defaults: α = 0.602, γ = 0.101 (J. C. Spall, "Implementation
of the simultaneous perturbation algorithm for stochastic optimization", IEEE Trans. Aerospace and Electronic
Systems 34(3), 1998). c is the probe radius (what the other solvers call β); a defaults to
(1 + A)^α / (2d), a first step of 1/(2d).

A literal chain of public parts — a Rademacher sampler, the two-sided estimator (zeroopt.central_difference), the
fixed step — and one part of its own, the gains, whose settings are the solver's options: SPSA has those five and
no others.
"""

from dataclasses import dataclass, replace

import zeroopt
from zeroopt import Estimate, FixedProbes, Sample, Step


class Rademacher(zeroopt.GaussianDirections):  # ±1 in every coordinate: E[u uᵀ] = I, as for N(0, I), so scale 1
    def sample(self, rng, q, d, iteration):
        return rng.choice([-1.0, 1.0], size=(q, d))


@dataclass(frozen=True)
class SpallGains(zeroopt.core.stages.AmendsMove):  # its part of its own, whose settings are all the options SPSA has
    a: float = 0.1
    A: float = 10.0
    alpha: float = 0.602
    c: float = 0.005  # the probe radius
    gamma: float = 0.101

    def __call__(self, solver, before, estimate, move):  # iteration k = before's + 1 takes a_k and c_k
        k = before.iteration + 1
        return replace(move, next_step=self.a / (k + 1 + self.A) ** self.alpha, beta=self.c / (k + 1) ** self.gamma)


@zeroopt.register_solver("spsa", SpallGains, "SPSA: two-sided differences along Rademacher directions, Spall's gains",
                         defaults=lambda ctx: {"a": (1 + SpallGains.A) ** SpallGains.alpha / (2 * ctx.dim)})
def make_spsa(gains, ctx):
    return zeroopt.chain(FixedProbes(1), Sample(Rademacher()), Estimate(zeroopt.central_difference),
                         Step(zeroopt.fixed_step), gains, name="spsa", beta=gains.c,
                         step=gains.a / (1 + gains.A) ** gains.alpha)
