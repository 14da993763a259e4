# label: hazard raises
# why: cot_laplacian symmetrizes the sparse cotangent matrix with L += L.t(); the in-place add bumps the version of the sparse tensor that autograd saved when building it, so backpropagating a laplacian smoothing loss to the vertices fails.
# source: https://github.com/facebookresearch/pytorch3d/commit/3b5ab51de55aa47f6ca691dda19cf5907f168a4c
from typing import Tuple

import torch

torch.manual_seed(0)


def cot_laplacian(verts: torch.Tensor, faces: torch.Tensor, eps: float = 1e-12) -> Tuple[torch.Tensor, torch.Tensor]:
    V, F = verts.shape[0], faces.shape[0]

    face_verts = verts[faces]
    v0, v1, v2 = face_verts[:, 0], face_verts[:, 1], face_verts[:, 2]

    # Side lengths of each triangle, of shape (sum(F_n),)
    A = (v1 - v2).norm(dim=1)
    B = (v0 - v2).norm(dim=1)
    C = (v0 - v1).norm(dim=1)

    # Area of each triangle (with Heron's formula); shape is (sum(F_n),)
    s = 0.5 * (A + B + C)
    # note that the area can be negative (close to 0) causing nans after sqrt()
    # we clip it to a small positive value
    area = (s * (s - A) * (s - B) * (s - C)).clamp_(min=eps).sqrt()

    # Compute cotangents of angles, of shape (sum(F_n), 3)
    A2, B2, C2 = A * A, B * B, C * C
    cota = (B2 + C2 - A2) / area
    cotb = (A2 + C2 - B2) / area
    cotc = (A2 + B2 - C2) / area
    cot = torch.stack([cota, cotb, cotc], dim=1)
    cot /= 4.0

    # Construct a sparse matrix by basically doing:
    # L[v1, v2] = cota, L[v2, v0] = cotb, L[v0, v1] = cotc
    ii = faces[:, [1, 2, 0]]
    jj = faces[:, [2, 0, 1]]
    idx = torch.stack([ii, jj], dim=0).view(2, F * 3)
    L = torch.sparse_coo_tensor(idx, cot.view(-1), (V, V), dtype=torch.float32)

    # Make it symmetric
    L += L.t()  # <-- IPL001: in-place add on the sparse tensor autograd saved when constructing it

    # For each vertex, compute the sum of areas for triangles containing it.
    idx = faces.view(-1)
    inv_areas = torch.zeros(V, dtype=torch.float32, device=verts.device)
    val = torch.stack([area] * 3, dim=1).view(-1)
    inv_areas.scatter_add_(0, idx, val)
    idx = inv_areas > 0
    inv_areas[idx] = torch.reciprocal(inv_areas[idx])
    inv_areas = inv_areas.view(-1, 1)

    return L, inv_areas


def mesh_laplacian_smoothing(verts_packed, faces_packed, method: str = "cot"):
    with torch.no_grad():
        weights = torch.full((verts_packed.shape[0], 1), 1.0 / verts_packed.shape[0])
    L, inv_areas = cot_laplacian(verts_packed, faces_packed)
    if method == "cot":
        norm_w = torch.sparse.sum(L, dim=1).to_dense().view(-1, 1)
        idx = norm_w > 0
        norm_w[idx] = 1.0 / norm_w[idx]
    else:
        L_sum = torch.sparse.sum(L, dim=1).to_dense().view(-1, 1)
        norm_w = 0.25 * inv_areas
    loss = L.mm(verts_packed) * norm_w - verts_packed
    loss = loss.norm(dim=1)
    loss = loss * weights
    return loss.sum()


# a small deformable square pyramid mesh
src_verts = torch.tensor([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 0.8]])
faces = torch.tensor([[0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4], [0, 2, 1], [0, 3, 2]])
deform_verts = torch.full(src_verts.shape, 0.05, requires_grad=True)
optimizer = torch.optim.SGD([deform_verts], lr=0.1, momentum=0.9)
optimizer.zero_grad()
new_verts = src_verts + deform_verts
loss_laplacian = mesh_laplacian_smoothing(new_verts, faces, method="cot")
loss_laplacian.backward()
optimizer.step()
