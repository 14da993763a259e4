# label: safe no-twin
# why: the mean-teacher update writes through .data of the teacher's parameters after the student's optimizer step; the teacher's outputs are only used as detached targets, so no live graph reads the overwritten values.
# source: https://github.com/neuropoly/domainadaptation/issues/1
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def create_model(ema=False):
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
        nn.Conv2d(4, 1, 3, padding=1))
    if ema:
        for param in model.parameters():
            param.detach_()
    return model


def update_ema_variables(model, ema_model, alpha, global_step):
    alpha = min(1 - 1 / (global_step + 1), alpha)
    for ema_param, param in zip(ema_model.parameters(), model.parameters()):
        ema_param.data.mul_(alpha).add_((1 - alpha) * param.data)


def dice_loss(input, target):
    eps = 0.0001
    iflat = input.view(-1)
    tflat = target.view(-1)
    intersection = (iflat * tflat).sum()
    union = iflat.sum() + tflat.sum()
    return 1 - (2.0 * intersection + eps) / (union + eps)


model = create_model()
ema_model = create_model(ema=True)
ema_model.load_state_dict(model.state_dict())
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

global_step = 0
for i in range(3):
    source_input = torch.randn(2, 1, 8, 8)
    source_gt = (torch.rand(2, 1, 8, 8) > 0.5).float()
    target_input = torch.randn(2, 1, 8, 8)

    model_out = torch.sigmoid(model(source_input))
    class_loss = dice_loss(model_out, source_gt)

    student_target_out = torch.sigmoid(model(target_input))
    teacher_target_out = torch.sigmoid(ema_model(target_input)).detach()
    consistency_loss = F.mse_loss(student_target_out, teacher_target_out)

    loss = class_loss + 0.5 * consistency_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    global_step += 1
    update_ema_variables(model, ema_model, 0.99, global_step)

final_teacher_weight = ema_model[0].weight.clone()
