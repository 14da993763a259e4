# label: hazard raises
# why: from the second MDS iteration the coordinates depend on the predicted distogram, and the zero-distance fix adds 1e-7 in place to the cdist output that CdistBackward saved
# source: https://github.com/lucidrains/alphafold2/commit/8d5e94878a0f6b834597aa7ae352096b44b1d7b7
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


def expand_dims_to(t, length=3):
    if length == 0:
        return t
    return t.reshape(*((1,) * length), *t.shape)


def mds_torch(pre_dist_mat, weights=None, iters=10, tol=1e-5, verbose=2):
    """ Gets distance matrix. Outputs 3d. Assumes distogram is (N x N) and symmetric """
    device = pre_dist_mat.device
    if weights is None:
        weights = torch.ones_like(pre_dist_mat)
    # ensure batched MDS
    pre_dist_mat = expand_dims_to(pre_dist_mat, length=(3 - len(pre_dist_mat.shape)))
    # start
    batch, N, _ = pre_dist_mat.shape
    diag_idxs = np.arange(N)
    his = []
    # init random coords
    best_stress = float("Inf") * torch.ones(batch, device=device)
    best_3d_coords = 2 * torch.rand(batch, N, 3, device=device) - 1
    # iterative updates:
    for i in range(iters):
        # compute distance matrix of coords and stress
        dist_mat = torch.cdist(best_3d_coords, best_3d_coords, p=2)
        stress = (weights * (dist_mat - pre_dist_mat) ** 2).sum(dim=(-1, -2)) * 0.5
        # perturb - update X using the Guttman transform - sklearn-like
        dist_mat[dist_mat == 0] += 1e-7  # <-- IPL001: cdist saved its output for backward
        ratio = weights * (pre_dist_mat / dist_mat)
        B = -ratio
        B[:, diag_idxs, diag_idxs] += ratio.sum(dim=-1)
        # update
        coords = (1. / N * torch.matmul(B, best_3d_coords))
        dis = torch.norm(coords, dim=(-1, -2))
        if verbose >= 2:
            print('it: %d, stress %s' % (i, stress))
        # update metrics if relative improvement above tolerance
        if (best_stress - stress / dis).mean() <= tol:
            break
        best_3d_coords = coords
        best_stress = (stress / dis)
        his.append(best_stress)
    return torch.transpose(best_3d_coords, -1, -2), torch.cat(his)


class DistogramHead(nn.Module):
    def __init__(self, dim, buckets=8):
        super().__init__()
        self.to_logits = nn.Linear(dim, buckets)
        self.register_buffer("bucket_centers", torch.linspace(2.0, 16.0, buckets))

    def forward(self, pair_repr):
        probs = self.to_logits(pair_repr).softmax(dim=-1)
        dist = (probs * self.bucket_centers).sum(-1)
        return 0.5 * (dist + dist.transpose(-1, -2))


n_res = 6
pair_repr = torch.randn(n_res, n_res, 4)
head = DistogramHead(4)
pre_dist_mat = head(pair_repr)
pre_dist_mat = pre_dist_mat * (1 - torch.eye(n_res))
coords, historic_stress = mds_torch(pre_dist_mat, iters=3, tol=-1e9, verbose=0)
true_coords = torch.randn(3, n_res)
coords = coords[0]
loss = ((torch.cdist(coords.t(), coords.t()) - torch.cdist(true_coords.t(), true_coords.t())) ** 2).mean()
loss.backward()
