# label: hazard silent
# why: normalize_egomotion divides the DataLoader batch's speed/acceleration in place, so the multi-seed loop that reuses the batch feeds an already-scaled egomotion to every seed after the first
# source: https://github.com/autowarefoundation/auto_e2e/pull/202
import torch
import torch.nn as nn

torch.manual_seed(0)

SPEED_SCALE = 33.0
ACCEL_SCALE = 5.0


class PlannerHead(nn.Module):
    def __init__(self, feat_dim=6, ego_dim=2, horizon=3):
        super().__init__()
        self.horizon = horizon
        self.encoder = nn.GRU(ego_dim, 8, batch_first=True)
        self.fuse = nn.Linear(8 + feat_dim, 2 * horizon)
        self.dropout = nn.Dropout(0.2)

    def normalize_egomotion(self, egomotion):
        B, T, _ = egomotion.shape
        for b in range(B):
            for t in range(T):
                egomotion[b, t, 0] /= SPEED_SCALE  # <-- IPL004: caller's batch tensor scaled in place
                egomotion[b, t, 1] /= ACCEL_SCALE  # <-- IPL004: caller's batch tensor scaled in place
        return egomotion

    def forward(self, batch):
        ego = self.normalize_egomotion(batch["egomotion"])
        _, h = self.encoder(ego)
        fused = torch.cat([self.dropout(h[-1]), batch["scene_feat"]], dim=-1)
        return self.fuse(fused).view(-1, self.horizon, 2)


def overlay_precompute(model, batch, seeds):
    trajectories = []
    for seed in seeds:
        torch.manual_seed(seed)
        with torch.no_grad():
            trajectories.append(model(batch))
    return torch.stack(trajectories)


model = PlannerHead()
model.train()
batch = {
    "egomotion": torch.tensor([[[12.0, 1.5], [13.0, 0.5], [13.5, -0.5], [13.0, -1.0]],
                               [[3.0, 2.0], [5.0, 2.5], [7.5, 2.0], [9.0, 1.0]]]),
    "scene_feat": torch.randn(2, 6),
}
trajectories = overlay_precompute(model, batch, seeds=[0, 1, 2])
