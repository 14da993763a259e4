# label: safe no-twin
# why: SparseBEV writes the grid anchors into the learnable init_query_bbox embedding inside torch.no_grad() (so no leaf is mutated under autograd), and later rescales bbox_preds in place, which is the output of torch.stack (stack saves nothing), so no saved tensor is overwritten.
# source: https://github.com/MCG-NJU/SparseBEV/issues/85
import math
import torch
import torch.nn as nn

torch.manual_seed(0)


class SparseBEVTransformerStub(nn.Module):
    """Decoder stand-in: refines the query boxes per layer and stacks the per-layer predictions."""

    def __init__(self, embed_dims=8, num_layers=2, num_classes=3):
        super().__init__()
        self.reg_branches = nn.ModuleList([nn.Linear(10 + embed_dims, 10) for _ in range(num_layers)])
        self.cls_branches = nn.ModuleList([nn.Linear(embed_dims, num_classes) for _ in range(num_layers)])

    def forward(self, query_bbox, query_feat):
        cls_scores, bbox_preds = [], []
        for reg, cls in zip(self.reg_branches, self.cls_branches):
            delta = reg(torch.cat([query_bbox, query_feat], dim=-1))
            xyz = (query_bbox[..., 0:3] + delta[..., 0:3]).sigmoid()
            query_bbox = torch.cat([xyz, query_bbox[..., 3:] + delta[..., 3:]], dim=-1)
            cls_scores.append(cls(query_feat))
            bbox_preds.append(query_bbox)
        return torch.stack(cls_scores), torch.stack(bbox_preds)


class SparseBEVHead(nn.Module):
    def __init__(self, num_query=16, num_classes=3, embed_dims=8,
                 pc_range=(-51.2, -51.2, -5.0, 51.2, 51.2, 3.0)):
        super().__init__()
        self.num_query = num_query
        self.num_classes = num_classes
        self.embed_dims = embed_dims
        self.pc_range = pc_range
        self.transformer = SparseBEVTransformerStub(embed_dims, num_classes=num_classes)
        self._init_layers()

    def _init_layers(self):
        self.init_query_bbox = nn.Embedding(self.num_query, 10)  # (x, y, z, w, l, h, sin, cos, vx, vy)
        self.label_enc = nn.Embedding(self.num_classes + 1, self.embed_dims - 1)  # DAB-DETR

        nn.init.zeros_(self.init_query_bbox.weight[:, 2:3])
        nn.init.zeros_(self.init_query_bbox.weight[:, 8:10])
        nn.init.constant_(self.init_query_bbox.weight[:, 5:6], 1.5)

        grid_size = int(math.sqrt(self.num_query))
        assert grid_size * grid_size == self.num_query
        x = y = torch.arange(grid_size)
        xx, yy = torch.meshgrid(x, y, indexing='ij')  # [0, grid_size - 1]
        xy = torch.cat([xx[..., None], yy[..., None]], dim=-1)
        xy = (xy + 0.5) / grid_size  # [0.5, grid_size - 0.5] / grid_size ~= (0, 1)
        with torch.no_grad():
            self.init_query_bbox.weight[:, :2] = xy.reshape(-1, 2)  # [Q, 2]

    def forward(self, batch_size):
        query_bbox = self.init_query_bbox.weight.clone()  # [Q, 10]
        indicator0 = torch.zeros([self.num_query, 1])
        init_query_feat = self.label_enc.weight[self.num_classes].repeat(self.num_query, 1)
        init_query_feat = torch.cat([init_query_feat, indicator0], dim=1)
        query_bbox = query_bbox.repeat(batch_size, 1, 1)
        query_feat = init_query_feat.repeat(batch_size, 1, 1)

        cls_scores, bbox_preds = self.transformer(query_bbox, query_feat)

        bbox_preds[..., 0] = bbox_preds[..., 0] * (self.pc_range[3] - self.pc_range[0]) + self.pc_range[0]
        bbox_preds[..., 1] = bbox_preds[..., 1] * (self.pc_range[4] - self.pc_range[1]) + self.pc_range[1]
        bbox_preds[..., 2] = bbox_preds[..., 2] * (self.pc_range[5] - self.pc_range[2]) + self.pc_range[2]

        bbox_preds = torch.cat([
            bbox_preds[..., 0:2],
            bbox_preds[..., 3:5],
            bbox_preds[..., 2:3],
            bbox_preds[..., 5:10],
        ], dim=-1)  # [cx, cy, w, l, cz, h, sin, cos, vx, vy]
        return {'all_cls_scores': cls_scores, 'all_bbox_preds': bbox_preds}


def main():
    head = SparseBEVHead()
    outs = head(batch_size=2)
    target = torch.randn_like(outs['all_bbox_preds'][-1])
    loss = (outs['all_bbox_preds'] - target).abs().mean() + outs['all_cls_scores'].pow(2).mean()
    loss.backward()
    return loss.detach(), head.init_query_bbox.weight.grad, head.label_enc.weight.grad


loss, query_grad, label_grad = main()
