# label: hazard raises
# why: each projected patch-token map is divided in place by its own norm, but norm() saved that map for its backward, so the loss on the similarity maps cannot be differentiated.
# source: https://github.com/caoyunkang/AdaCLIP/pull/46
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ProjectLayer(nn.Module):
    def __init__(self, input_dim, output_dim, num_replicas, stack=False, is_array=True):
        super().__init__()
        self.head = nn.ModuleList([nn.Linear(input_dim, output_dim) for _ in range(num_replicas)])
        self.num_replicas = num_replicas
        self.stack = stack
        self.is_array = is_array

    def forward(self, tokens):
        out_tokens = []
        for i in range(self.num_replicas):
            if self.is_array:
                temp = self.head[i](tokens[i][:, 1:, :])  # drop the class token
            else:
                temp = self.head[i](tokens)
            out_tokens.append(temp)
        if self.stack:
            out_tokens = torch.stack(out_tokens, dim=1)
        return out_tokens


class AdaCLIPHead(nn.Module):
    def __init__(self, visual_channel, text_channel, num_layers):
        super().__init__()
        self.patch_token_layer = ProjectLayer(visual_channel, text_channel, num_layers, stack=False, is_array=True)
        self.cls_token_layer = ProjectLayer(text_channel, text_channel, 1, stack=False, is_array=False)

    def proj_visual_tokens(self, image_features, patch_tokens):
        proj_patch_tokens = self.patch_token_layer(patch_tokens)
        for layer in range(len(proj_patch_tokens)):
            proj_patch_tokens[layer] /= proj_patch_tokens[layer].norm(dim=-1, keepdim=True)  # <-- IPL001: norm saved the projected tokens
        proj_cls_tokens = self.cls_token_layer(image_features)[0]
        proj_cls_tokens = proj_cls_tokens / proj_cls_tokens.norm(dim=-1, keepdim=True)
        return proj_cls_tokens, proj_patch_tokens

    def forward(self, image_features, patch_tokens, text_feature):
        cls_tok, patch_tok = self.proj_visual_tokens(image_features, patch_tokens)
        anomaly_maps = []
        for layer in range(len(patch_tok)):
            anomaly_map = 100.0 * patch_tok[layer] @ text_feature
            B, L, C = anomaly_map.shape
            H = int(L ** 0.5)
            anomaly_map = anomaly_map.permute(0, 2, 1).view(B, 2, H, H)
            anomaly_maps.append(torch.softmax(anomaly_map, dim=1))
        score = torch.softmax((100.0 * cls_tok.unsqueeze(1) @ text_feature).squeeze(1), dim=1)
        return anomaly_maps, score


B, grid, vis_c, txt_c, n_layers = 2, 4, 12, 8, 2
head = AdaCLIPHead(vis_c, txt_c, n_layers)
backbone = nn.Linear(vis_c, vis_c)
raw = torch.randn(B, grid * grid + 1, vis_c)
patch_tokens = [backbone(raw) for _ in range(n_layers)]
image_features = torch.randn(B, txt_c)
text_feature = F.normalize(torch.randn(txt_c, 2), dim=0)
gt_mask = (torch.rand(B, grid, grid) > 0.7).long()
gt_label = torch.tensor([0, 1])

maps, score = head(image_features, patch_tokens, text_feature)
loss = sum(F.nll_loss(torch.log(m + 1e-6), gt_mask) for m in maps) + F.nll_loss(torch.log(score), gt_label)
loss.backward()
