# label: hazard raises
# why: the relative-coordinate predictor zeroes the anchor position of preds_coord by index assignment, but preds_coord is the output of the predictor's ReLU, which saved it for backward
# source: https://github.com/JDAI-CV/LIO/issues/9
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class RelativeCoordPredictor(nn.Module):
    def __init__(self, in_dim, size=7):
        super().__init__()
        self.in_dim = in_dim
        self.size = size
        self.predictor = nn.Sequential(
            nn.Linear(2 * in_dim, 2),
            nn.ReLU(),
        )
        self.basic_label = torch.from_numpy(self.build_basic_label(size)).float()
        self.dist_loss_f = nn.MSELoss(reduction='none')

    def forward(self, x, mask):
        N, C, H, W = x.shape
        reduced_x = x.view(N, C, H * W).transpose(1, 2).contiguous()

        mask = mask.view(N, H * W)
        thresholds = torch.mean(mask, dim=1, keepdim=True)
        binary_mask = (mask > thresholds).float()
        binary_mask = binary_mask.view(N, H, W)

        masked_x = x * binary_mask.view(N, 1, H, W)
        masked_x = masked_x.view(N, C, H * W).transpose(1, 2).contiguous()
        _, reduced_x_max_index = torch.max(torch.mean(masked_x, dim=-1), dim=-1)

        basic_index = torch.from_numpy(np.array([i for i in range(N)]))
        max_features = reduced_x[basic_index, reduced_x_max_index, :]
        max_features_to_concat = max_features.unsqueeze(1).expand((N, H * W, C))

        discriminative_feature = torch.cat((max_features_to_concat, reduced_x), dim=-1)
        discriminative_feature = discriminative_feature.view(N * H * W, 2 * C)
        preds_coord = self.predictor(discriminative_feature)
        preds_coord = preds_coord.view(N, H * W, 2)
        preds_coord[basic_index, reduced_x_max_index, :] = 0.  # <-- IPL001: overwrites the ReLU output saved for backward
        preds_coord = preds_coord.view(N, H, W, 2)

        label = self.basic_label
        label = label.unsqueeze(0).expand((N, H, W, 2)).reshape(N, H * W, 2)
        basic_anchor = label[basic_index, reduced_x_max_index, :].unsqueeze(1)
        relative_coord = label - basic_anchor
        relative_coord = relative_coord / self.size
        relative_dist = torch.sqrt(torch.sum(relative_coord ** 2, dim=-1))
        relative_angle = torch.atan2(relative_coord[:, :, 1], relative_coord[:, :, 0])
        relative_angle = (relative_angle / np.pi + 1) / 2

        preds_dist, preds_angle = preds_coord[:, :, :, 0], preds_coord[:, :, :, 1]

        preds_dist = preds_dist.reshape(N, H, W)
        relative_dist = relative_dist.view(N, H, W)
        dist_loss = self.dist_loss_f(preds_dist, relative_dist)

        preds_angle = preds_angle.reshape(N, H * W)
        gap_angle = preds_angle - relative_angle
        gap_angle[gap_angle < 0] += 1
        gap_angle = gap_angle - torch.mean(gap_angle, dim=-1, keepdim=True)
        gap_angle = gap_angle.view(N, H, W)
        angle_loss = torch.pow(gap_angle, 2)
        return dist_loss + angle_loss

    def build_basic_label(self, size):
        return np.array([[(i, j) for j in range(size)] for i in range(size)])


backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
mask_head = nn.Conv2d(8, 1, 1)
coord_predictor = RelativeCoordPredictor(8, size=4)
images = torch.randn(2, 3, 4, 4)
feature = backbone(images)
mask = torch.sigmoid(mask_head(feature))
coord_loss = coord_predictor(feature, mask).mean()
coord_loss.backward()
