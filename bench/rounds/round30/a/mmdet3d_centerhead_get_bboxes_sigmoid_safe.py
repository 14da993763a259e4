# label: safe
# why: the fix decodes with `batch_heatmap = preds_dict[0]['heatmap'].sigmoid()`, a new tensor, so the RPN loss computed afterwards on the same preds_dicts still sees the raw heatmap logits.
# source: https://github.com/open-mmlab/mmdetection3d/commit/cba10837ad7df30495cd93d03f262812e39387e6
import torch
import torch.nn as nn

torch.manual_seed(0)


def clip_sigmoid(x, eps=1e-4):
    y = torch.clamp(x.sigmoid(), min=eps, max=1 - eps)
    return y


def gaussian_focal_loss(pred, gaussian_target, alpha=2.0, gamma=4.0):
    eps = 1e-12
    pos_weights = gaussian_target.eq(1)
    neg_weights = (1 - gaussian_target).pow(gamma)
    pos_loss = -(pred + eps).log() * (1 - pred).pow(alpha) * pos_weights
    neg_loss = -(1 - pred + eps).log() * pred.pow(alpha) * neg_weights
    return (pos_loss + neg_loss).sum() / pos_weights.sum().clamp(min=1)


class CenterHead(nn.Module):
    def __init__(self, in_channels=8, num_classes=2):
        super().__init__()
        self.shared_conv = nn.Conv2d(in_channels, 8, 3, padding=1)
        self.heatmap = nn.Conv2d(8, num_classes, 1)
        self.reg = nn.Conv2d(8, 2, 1)

    def forward(self, feats):
        x = torch.relu(self.shared_conv(feats))
        return [[dict(heatmap=self.heatmap(x), reg=self.reg(x))]]

    def get_bboxes(self, preds_dicts, max_num=4):
        rets = []
        for task_id, preds_dict in enumerate(preds_dicts):
            batch_size = preds_dict[0]['heatmap'].shape[0]
            batch_heatmap = preds_dict[0]['heatmap'].sigmoid()
            batch_reg = preds_dict[0]['reg']
            scores, inds = batch_heatmap.flatten(1).topk(max_num, dim=1)
            rets.append(dict(scores=scores.detach(), inds=inds,
                             reg=batch_reg.flatten(2).gather(2, inds[:, None, :] % batch_reg[0, 0].numel())))
        return rets

    def loss(self, gt_heatmaps, gt_regs, preds_dicts):
        loss_dict = dict()
        for task_id, preds_dict in enumerate(preds_dicts):
            # heatmap focal loss
            preds_dict[0]['heatmap'] = clip_sigmoid(preds_dict[0]['heatmap'])
            loss_heatmap = gaussian_focal_loss(preds_dict[0]['heatmap'], gt_heatmaps[task_id])
            loss_bbox = (preds_dict[0]['reg'] - gt_regs[task_id]).abs().mean()
            loss_dict[f'task{task_id}.loss_heatmap'] = loss_heatmap
            loss_dict[f'task{task_id}.loss_bbox'] = loss_bbox
        return loss_dict


def main():
    head = CenterHead()
    feats = torch.randn(2, 8, 6, 6)
    gt_heatmap = torch.rand(2, 2, 6, 6) * 0.9
    gt_heatmap[:, :, 2, 3] = 1.0
    gt_reg = torch.randn(2, 2, 6, 6)
    outs = head(feats)
    # two-stage: decode RPN proposals for the RoI head, then compute the RPN losses
    proposals = head.get_bboxes(outs)
    losses = head.loss([gt_heatmap], [gt_reg], outs)
    loss = sum(losses.values())
    loss.backward()
    return loss.detach(), head.heatmap.weight.grad, proposals[0]['scores']


loss, heatmap_grad, proposal_scores = main()
