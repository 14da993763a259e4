# label: hazard raises
# why: patch_tokens[layer] /= patch_tokens[layer].norm(...) divides the linear-layer output in place although the norm just saved it for backward.
# source: https://github.com/ByChelsea/VAND-APRIL-GAN/issues/27
import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F

torch.manual_seed(0)


class LinearLayer(nn.Module):
    def __init__(self, dim_in, dim_out, k, model):
        super(LinearLayer, self).__init__()
        if 'ViT' in model:
            self.fc = nn.ModuleList([nn.Linear(dim_in, dim_out) for i in range(k)])
        else:
            self.fc = nn.ModuleList([nn.Linear(dim_in * 2 ** (i + 2), dim_out) for i in range(k)])

    def forward(self, tokens):
        for i in range(len(tokens)):
            if len(tokens[i].shape) == 3:
                tokens[i] = self.fc[i](tokens[i][:, 1:, :])
            else:
                B, C, H, W = tokens[i].shape
                tokens[i] = self.fc[i](tokens[i].view(B, C, -1).permute(0, 2, 1).contiguous())
        return tokens


class TinyVisionTower(nn.Module):
    """Stands in for the frozen open_clip ViT: returns the pooled feature and the tokens of features_list."""

    def __init__(self, width=16, patch=4, layers=4):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, width, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, width))
        self.blocks = nn.ModuleList([nn.Sequential(nn.LayerNorm(width), nn.Linear(width, width), nn.GELU())
                                     for _ in range(layers)])
        self.proj = nn.Linear(width, 8)

    def encode_image(self, image, features_list):
        x = self.patch_embed(image).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)
        patch_tokens = []
        for idx, blk in enumerate(self.blocks):
            x = x + blk(x)
            if idx + 1 in features_list:
                patch_tokens.append(x)
        return self.proj(x[:, 0]), patch_tokens


class FocalLoss(nn.Module):
    def __init__(self, gamma=2, smooth=1e-5):
        super(FocalLoss, self).__init__()
        self.gamma = gamma
        self.smooth = smooth

    def forward(self, logit, target):
        num_class = logit.shape[1]
        logit = logit.permute(0, 2, 3, 1).reshape(-1, num_class)
        target = target.reshape(-1).long()
        pt = logit.gather(1, target.view(-1, 1)).view(-1).clamp(self.smooth, 1.0 - self.smooth)
        logpt = pt.log()
        loss = -1 * torch.pow(1 - pt, self.gamma) * logpt
        return loss.mean()


class BinaryDiceLoss(nn.Module):
    def forward(self, input, targets):
        N = targets.size()[0]
        smooth = 1
        input_flat = input.view(N, -1)
        targets_flat = targets.view(N, -1)
        intersection = input_flat * targets_flat
        N_dice_eff = (2 * intersection.sum(1) + smooth) / (input_flat.sum(1) + targets_flat.sum(1) + smooth)
        loss = 1 - N_dice_eff.sum() / N
        return loss


image_size = 16
features_list = [2, 3, 4]
model = TinyVisionTower()
trainable_layer = LinearLayer(16, 8, len(features_list), 'ViT-B-16')
optimizer = torch.optim.Adam(list(trainable_layer.parameters()), lr=1e-3, betas=(0.5, 0.999))
loss_focal = FocalLoss()
loss_dice = BinaryDiceLoss()
text_prompts = {'bottle': F.normalize(torch.randn(8, 2), dim=0), 'cable': F.normalize(torch.randn(8, 2), dim=0)}

items = {
    'img': torch.randn(2, 3, image_size, image_size),
    'img_mask': torch.rand(2, 1, image_size, image_size),
    'cls_name': ['bottle', 'cable'],
}

image = items['img']
cls_name = items['cls_name']
with torch.no_grad():
    image_features, patch_tokens = model.encode_image(image, features_list)
    text_features = []
    for cls in cls_name:
        text_features.append(text_prompts[cls])
    text_features = torch.stack(text_features, dim=0)

patch_tokens = trainable_layer(patch_tokens)
anomaly_maps = []
for layer in range(len(patch_tokens)):
    patch_tokens[layer] /= patch_tokens[layer].norm(dim=-1, keepdim=True)  # <-- IPL001: the norm saved this linear output for its backward
    anomaly_map = (100.0 * patch_tokens[layer] @ text_features)
    B, L, C = anomaly_map.shape
    H = int(np.sqrt(L))
    anomaly_map = F.interpolate(anomaly_map.permute(0, 2, 1).view(B, 2, H, H),
                                size=image_size, mode='bilinear', align_corners=True)
    anomaly_map = torch.softmax(anomaly_map, dim=1)
    anomaly_maps.append(anomaly_map)

gt = items['img_mask'].squeeze()
gt[gt > 0.5], gt[gt <= 0.5] = 1, 0
loss = 0
for num in range(len(anomaly_maps)):
    loss += loss_focal(anomaly_maps[num], gt)
    loss += loss_dice(anomaly_maps[num][:, 1, :, :], gt)

optimizer.zero_grad()
loss.backward()
optimizer.step()
