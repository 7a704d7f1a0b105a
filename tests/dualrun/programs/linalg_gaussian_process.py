"""Gaussian-process regression fitted through ``torch.linalg``, then PCA and ridge regression on the same data.

The GP's negative log marginal likelihood is computed as a textbook does it,
with a Cholesky factor and two triangular solves, and its two hyperparameters
(log length-scale, log noise) are fitted by Adam: every step differentiates
through ``cholesky`` and ``solve_triangular``. PCA reads the principal axes from
``svd`` and the spectrum from ``eigvalsh`` of the covariance; ridge regression
solves its normal equations with ``solve`` and is checked against ``pinv``;
``matrix_norm``, ``vector_norm``, ``slogdet`` and ``matrix_rank`` report on the
result. Losses, fitted values, spectra and norms are compared.
"""

import json
import math

import numpy as np
import torch

rng = np.random.default_rng(5)
x = torch.from_numpy(np.sort(rng.uniform(-3.0, 3.0, 24))).unsqueeze(1)
y = torch.sin(x[:, 0]) + 0.1 * torch.from_numpy(rng.normal(size=24))


def kernel(a, b, log_scale):
    distances = (a - b.T) ** 2
    return torch.exp(-0.5 * distances / torch.exp(2 * log_scale))


def negative_log_likelihood(log_scale, log_noise):
    n = x.shape[0]
    k = kernel(x, x, log_scale) + torch.exp(2 * log_noise) * torch.eye(n, dtype=torch.float64)
    low = torch.linalg.cholesky(k)
    z = torch.linalg.solve_triangular(low, y.unsqueeze(1), upper=False)
    return 0.5 * (z**2).sum() + torch.log(torch.diagonal(low)).sum() + 0.5 * n * math.log(2 * math.pi)


log_scale = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
log_noise = torch.tensor(-1.0, dtype=torch.float64, requires_grad=True)
optimizer = torch.optim.Adam([log_scale, log_noise], lr=0.05)
losses = []
for step in range(30):
    optimizer.zero_grad()
    loss = negative_log_likelihood(log_scale, log_noise)
    loss.backward()
    optimizer.step()
    if step % 5 == 0:
        losses.append(loss.item())

with torch.no_grad():
    k = kernel(x, x, log_scale) + torch.exp(2 * log_noise) * torch.eye(24, dtype=torch.float64)
    x_test = torch.linspace(-3.0, 3.0, 7, dtype=torch.float64).unsqueeze(1)
    mean = kernel(x_test, x, log_scale) @ torch.linalg.solve(k, y)

features = torch.cat([x, x**2, torch.sin(2 * x), torch.cos(x)], dim=1)
centered = features - features.mean(dim=0)
u, s, vh = torch.linalg.svd(centered, full_matrices=False)
reconstruction = (u[:, :2] * s[:2]) @ vh[:2]
covariance_spectrum = torch.linalg.eigvalsh(centered.T @ centered / (centered.shape[0] - 1))

design = torch.cat([features, torch.ones(24, 1, dtype=torch.float64)], dim=1)
ridge = torch.linalg.solve(design.T @ design + 1e-3 * torch.eye(5, dtype=torch.float64), design.T @ y)
least_squares = torch.linalg.pinv(design) @ y
sign, logabsdet = torch.linalg.slogdet(design.T @ design)

print(json.dumps({
    "losses": losses,
    "hyperparameters": [log_scale.item(), log_noise.item()],
    "posterior_mean": mean.tolist(),
    "singular_values": s.tolist(),
    "reconstruction_error": torch.linalg.matrix_norm(centered - reconstruction).item(),
    "covariance_spectrum": covariance_spectrum.tolist(),
    "ridge": ridge.tolist(),
    "least_squares": least_squares.tolist(),
    "residual_norm": torch.linalg.vector_norm(design @ least_squares - y).item(),
    "slogdet": [sign.item(), logabsdet.item()],
    "rank": torch.linalg.matrix_rank(design).item(),
    "nuclear_norm": torch.linalg.matrix_norm(centered, ord="nuc").item(),
    "tolerance": {"rtol": 1e-7, "atol": 1e-9},
}))
