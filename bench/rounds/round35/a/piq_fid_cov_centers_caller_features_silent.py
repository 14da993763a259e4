# label: hazard silent
# why: piq's FID passes `predicted_features.detach()` (same storage as the caller's features) to _cov, which transposes it and centres it with `m -= torch.mean(m, dim=1, keepdim=True)`; the caller's feature matrices come back mean-centred, so the KID computed next on the same features (polynomial kernel, not shift invariant) is wrong (the fix "Removed inplace operation").
# source: https://github.com/photosynthesis-team/piq/commit/73a90714e354a2b97e6730522eb7113f9a8f0087
from typing import Optional, Tuple

import torch
import torch.nn as nn


def _validate_features(x: torch.Tensor, y: torch.Tensor) -> None:
    assert torch.is_tensor(x) and torch.is_tensor(y), f"Both features should be torch.Tensors, got {type(x)} and {type(y)}"
    assert x.dim() == 2, f"Predicted features must have shape (N_samples, encoder_dim), got {x.size()}"
    assert y.dim() == 2, f"Target features must have shape  (N_samples, encoder_dim), got {y.size()}"
    assert x.size(1) == y.size(1), f"Features dimensionalities should match, otherwise it won't be possible to correctly compute statistics. Got {x.size(1)} and {y.size(1)}"


class BaseFeatureMetric(torch.nn.Module):
    def __init__(self) -> None:
        super(BaseFeatureMetric, self).__init__()

    def forward(self, predicted_features: torch.Tensor, target_features: torch.Tensor) -> torch.Tensor:
        # Sanity check for input
        _validate_features(predicted_features, target_features)
        return self.compute_metric(predicted_features, target_features)

    @staticmethod
    def compute_metric(predicted_features: torch.Tensor, target_features: torch.Tensor):
        raise NotImplementedError("This function should be defined for each children class")


def _approximation_error(A: torch.Tensor, sA: torch.Tensor) -> torch.Tensor:
    normA = torch.norm(A)
    error = A - torch.mm(sA, sA)
    error = torch.norm(error) / normA
    return error


def _sqrtm_newton_schulz(A: torch.Tensor, num_iters: int = 100) -> Tuple[torch.Tensor, torch.Tensor]:
    dim = A.size(0)
    normA = A.norm(p='fro')
    Y = A.div(normA)
    I = torch.eye(dim, dim, requires_grad=False).to(A)
    Z = torch.eye(dim, dim, requires_grad=False).to(A)

    sA = torch.empty_like(A)
    error = torch.empty(1)

    for i in range(num_iters):
        T = 0.5 * (3.0 * I - Z.mm(Y))
        Y = Y.mm(T)
        Z = T.mm(Z)

        sA = Y * torch.sqrt(normA)
        error = _approximation_error(A, sA)
        if torch.isclose(error, torch.tensor([0.], device=error.device), atol=1e-5):
            break
    return sA, error


def _compute_fid(mu1: torch.Tensor, sigma1: torch.Tensor, mu2: torch.Tensor, sigma2: torch.Tensor,
                 eps=1e-6) -> torch.Tensor:
    diff = mu1 - mu2
    covmean, _ = _sqrtm_newton_schulz(sigma1.mm(sigma2))
    # Product might be almost singular
    if not torch.isfinite(covmean).all():
        print(f'FID calculation produces singular product; adding {eps} to diagonal of cov estimates')
        offset = torch.eye(sigma1.size(0)) * eps
        covmean, _ = _sqrtm_newton_schulz((sigma1 + offset).mm(sigma2 + offset))

    tr_covmean = torch.trace(covmean)
    return diff.dot(diff) + torch.trace(sigma1) + torch.trace(sigma2) - 2 * tr_covmean


def _cov(m: torch.Tensor, rowvar: bool = True) -> torch.Tensor:
    r"""Estimate a covariance matrix given data."""
    if m.dim() > 2:
        raise ValueError('Tensor for covariance computations has more than 2 dimensions. '
                         'Only 1 or 2 dimensional arrays are allowed')
    if m.dim() < 2:
        m = m.view(1, -1)
    if not rowvar and m.size(0) != 1:
        m = m.t()
    fact = 1.0 / (m.size(1) - 1)
    m -= torch.mean(m, dim=1, keepdim=True)  # <-- IPL004
    mt = m.t()
    return fact * m.matmul(mt).squeeze()


def _compute_statistics(samples: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    mu = torch.mean(samples, dim=0)
    sigma = _cov(samples, rowvar=False)
    return mu, sigma


class FID(BaseFeatureMetric):
    def compute_metric(self, predicted_features: torch.Tensor, target_features: torch.Tensor) -> torch.Tensor:
        # GPU -> CPU
        m_pred, s_pred = _compute_statistics(predicted_features.detach())
        m_targ, s_targ = _compute_statistics(target_features.detach())

        score = _compute_fid(m_pred, s_pred, m_targ, s_targ)

        return score


def _polynomial_kernel(X: torch.Tensor, Y: torch.Tensor = None, degree: int = 3,
                       gamma: Optional[float] = None, coef0: float = 1.) -> torch.Tensor:
    if Y is None:
        Y = X
    if gamma is None:
        gamma = 1.0 / X.size(1)
    K = torch.mm(X, Y.T)
    K *= gamma
    K += coef0
    K.pow_(degree)
    return K


def _mmd2(K_XX: torch.Tensor, K_XY: torch.Tensor, K_YY: torch.Tensor) -> torch.Tensor:
    m = K_XX.size(0)
    diag_X = torch.diagonal(K_XX)
    diag_Y = torch.diagonal(K_YY)
    Kt_XX_sum = (K_XX.sum(dim=1) - diag_X).sum()
    Kt_YY_sum = (K_YY.sum(dim=1) - diag_Y).sum()
    K_XY_sum = K_XY.sum()
    mmd2 = (Kt_XX_sum + Kt_YY_sum) / (m * (m - 1))
    mmd2 -= 2 * K_XY_sum / (m * m)
    return mmd2


class KID(BaseFeatureMetric):
    def __init__(self, degree: int = 3, gamma: Optional[float] = None, coef0: int = 1) -> None:
        super().__init__()
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0

    def compute_metric(self, predicted_features: torch.Tensor, target_features: torch.Tensor) -> torch.Tensor:
        K_XX = _polynomial_kernel(predicted_features, None, degree=self.degree, gamma=self.gamma, coef0=self.coef0)
        K_YY = _polynomial_kernel(target_features, None, degree=self.degree, gamma=self.gamma, coef0=self.coef0)
        K_XY = _polynomial_kernel(predicted_features, target_features, degree=self.degree, gamma=self.gamma,
                                  coef0=self.coef0)
        return _mmd2(K_XX, K_XY, K_YY)


class FeatureExtractor(nn.Module):
    """Stand-in for InceptionV3 pool features."""

    def __init__(self, dim=8):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                                 nn.Conv2d(8, dim, 3, stride=2, padding=1), nn.ReLU(),
                                 nn.AdaptiveAvgPool2d(1))

    def forward(self, images):
        return [self.net(images)]


def compute_feats(images, feature_extractor):
    total_feats = []
    with torch.no_grad():
        for batch in images.split(8):
            N = batch.shape[0]
            features = feature_extractor(batch)
            total_feats.append(features[0].view(N, -1))
    return torch.cat(total_feats, dim=0)


def main():
    torch.manual_seed(0)
    extractor = FeatureExtractor().eval()
    generated = torch.rand(32, 3, 16, 16) * 0.8
    real = torch.rand(32, 3, 16, 16)
    predicted_features = compute_feats(generated, extractor)
    target_features = compute_feats(real, extractor)
    fid = FID()(predicted_features, target_features)
    kid = KID()(predicted_features, target_features)
    return fid, kid, predicted_features, target_features


fid, kid, predicted_features, target_features = main()
print(float(fid), float(kid))
