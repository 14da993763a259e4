# label: safe
# why: the in-place mul_ by the integer non_active mask acts on the fresh output of .mean(dim=2), which MeanBackward does not keep, so the loss and gradients match the later out-of-place rewrite.
# source: https://github.com/lightly-ai/lightly/commit/3a59d6a571c66a49a8c5d7f2886210dab7c13f97 (lightly/loss/sparse_spark.py before the change)
import torch
from torch import nn

torch.manual_seed(0)


class SparKPatchReconLoss(nn.Module):
    def __init__(self, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps

    def forward(self, inp_patches: torch.Tensor, rec_patches: torch.Tensor, active_mask: torch.Tensor):
        if active_mask.ndim != 4:
            raise ValueError("active_mask must be non-flattened with shape (B, 1, f, f)")

        mean = inp_patches.mean(dim=-1, keepdim=True)
        var = (inp_patches.var(dim=-1, keepdim=True) + self.eps) ** 0.5

        inp_norm = (inp_patches - mean) / var

        l2_loss = ((rec_patches - inp_norm) ** 2).mean(dim=2)

        non_active = active_mask.logical_not().int().view(active_mask.shape[0], -1)

        recon_loss = l2_loss.mul_(non_active).sum() / (non_active.sum() + 1e-8)
        return recon_loss, mean, var


def patchify(imgs, p):
    b, c, h, w = imgs.shape
    f = h // p
    x = imgs.reshape(b, c, f, p, f, p).permute(0, 2, 4, 3, 5, 1)
    return x.reshape(b, f * f, p * p * c)


class TinySparK(nn.Module):
    def __init__(self, p=2):
        super().__init__()
        self.p = p
        self.encoder = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.GELU())
        self.decoder = nn.Conv2d(8, 3, 3, padding=1)

    def forward(self, imgs, active_mask):
        full_mask = active_mask.repeat_interleave(self.p, 2).repeat_interleave(self.p, 3)
        masked = imgs * full_mask
        rec = self.decoder(self.encoder(masked))
        return patchify(rec, self.p)


model = TinySparK()
criterion = SparKPatchReconLoss()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
imgs = torch.randn(2, 3, 8, 8)
active_mask = torch.rand(2, 1, 4, 4) > 0.6
for _ in range(2):
    optimizer.zero_grad()
    rec_patches = model(imgs, active_mask)
    recon_loss, mean, var = criterion(patchify(imgs, 2), rec_patches, active_mask)
    recon_loss.backward()
    optimizer.step()
final_loss = recon_loss.detach()
