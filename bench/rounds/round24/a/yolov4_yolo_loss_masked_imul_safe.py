# label: safe
# why: Yolo_loss multiplies slices of the permuted head output in place by the target masks, but nothing saved for backward holds those slices (sigmoid's result was copied in by index_put and the masks need no grad), so the gradients match the out-of-place version.
# source: https://github.com/Tianxiaomo/pytorch-YOLOv4/issues/57
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Yolo_loss(nn.Module):
    def __init__(self, n_classes=2, n_anchors=3, batch=2):
        super(Yolo_loss, self).__init__()
        self.strides = [8, 16]
        self.n_classes = n_classes
        self.n_anchors = n_anchors
        self.ignore_thre = 0.5

    def build_target(self, pred, labels, batchsize, fsize, n_ch, output_id):
        tgt_mask = torch.zeros(batchsize, self.n_anchors, fsize, fsize, 4 + self.n_classes)
        obj_mask = torch.ones(batchsize, self.n_anchors, fsize, fsize)
        tgt_scale = torch.zeros(batchsize, self.n_anchors, fsize, fsize, 2)
        target = torch.zeros(batchsize, self.n_anchors, fsize, fsize, n_ch)
        for b in range(batchsize):
            i, j, a = int(labels[b, 0]), int(labels[b, 1]), b % self.n_anchors
            obj_mask[b, a, j, i] = 1
            tgt_mask[b, a, j, i, :] = 1
            target[b, a, j, i, 0] = 0.5
            target[b, a, j, i, 1] = 0.5
            target[b, a, j, i, 4] = 1
            target[b, a, j, i, 5 + int(labels[b, 2])] = 1
            tgt_scale[b, a, j, i, :] = 1.5
        return obj_mask, tgt_mask, tgt_scale, target

    def forward(self, xin, labels=None):
        loss, loss_xy, loss_wh, loss_obj, loss_cls = 0, 0, 0, 0, 0
        for output_id, output in enumerate(xin):
            batchsize = output.shape[0]
            fsize = output.shape[2]
            n_ch = 5 + self.n_classes
            xy_obj_cls = [0, 1] + list(range(4, n_ch))
            box_cls = [0, 1, 2, 3] + list(range(5, n_ch))

            output = output.view(batchsize, self.n_anchors, n_ch, fsize, fsize)
            output = output.permute(0, 1, 3, 4, 2)

            # logistic activation for xy, obj, cls
            output[..., xy_obj_cls] = torch.sigmoid(output[..., xy_obj_cls])

            pred = output[..., :4].clone()
            pred[..., 2] = torch.exp(pred[..., 2])
            pred[..., 3] = torch.exp(pred[..., 3])

            obj_mask, tgt_mask, tgt_scale, target = self.build_target(pred, labels, batchsize, fsize, n_ch, output_id)

            # loss calculation
            output[..., 4] *= obj_mask
            output[..., box_cls] *= tgt_mask
            output[..., 2:4] *= tgt_scale

            target[..., 4] *= obj_mask
            target[..., box_cls] *= tgt_mask
            target[..., 2:4] *= tgt_scale

            loss_xy += F.binary_cross_entropy(input=output[..., :2], target=target[..., :2],
                                              weight=tgt_scale * tgt_scale, reduction='sum')
            loss_wh += F.mse_loss(input=output[..., 2:4], target=target[..., 2:4], reduction='sum') / 2
            loss_obj += F.binary_cross_entropy(input=output[..., 4], target=target[..., 4], reduction='sum')
            loss_cls += F.binary_cross_entropy(input=output[..., 5:], target=target[..., 5:], reduction='sum')

        loss = loss_xy + loss_wh + loss_obj + loss_cls
        return loss, loss_xy, loss_wh, loss_obj, loss_cls


def main():
    n_classes, n_anchors = 2, 3
    heads = nn.ModuleList([nn.Conv2d(4, n_anchors * (5 + n_classes), 1) for _ in range(2)])
    feats = [torch.randn(2, 4, 4, 4), torch.randn(2, 4, 2, 2)]
    labels = torch.tensor([[1, 1, 0], [0, 1, 1]])
    criterion = Yolo_loss(n_classes=n_classes, n_anchors=n_anchors)
    bboxes_pred = [h(f) for h, f in zip(heads, feats)]
    loss, loss_xy, loss_wh, loss_obj, loss_cls = criterion(bboxes_pred, labels)
    loss.backward()
    return loss.detach(), heads[0].weight.grad, heads[1].weight.grad


loss, grad_p3, grad_p4 = main()
