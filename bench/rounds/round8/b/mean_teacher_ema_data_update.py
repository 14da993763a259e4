# label: safe no-twin
# why: the EMA teacher's parameters are updated through .data after the student's optimizer step; the teacher only produces detached consistency targets, so no live graph reads them
# source: https://github.com/CuriousAI/mean-teacher/issues/28
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def create_model(ema=False):
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
    if ema:
        for param in model.parameters():
            param.detach_()
    return model


def update_ema_variables(model, ema_model, alpha, global_step):
    alpha = min(1 - 1 / (global_step + 1), alpha)
    for ema_param, param in zip(ema_model.parameters(), model.parameters()):
        ema_param.data.mul_(alpha).add_(param.data, alpha=1 - alpha)


def softmax_mse_loss(input_logits, target_logits):
    input_softmax = F.softmax(input_logits, dim=1)
    target_softmax = F.softmax(target_logits, dim=1)
    return F.mse_loss(input_softmax, target_softmax, reduction='sum') / input_logits.size(1)


model = create_model()
ema_model = create_model(ema=True)
ema_model.load_state_dict(model.state_dict())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
class_criterion = nn.CrossEntropyLoss()

global_step = 0
losses = []
for i in range(3):
    input = torch.randn(8, 6)
    ema_input = input + 0.1 * torch.randn(8, 6)
    target = torch.randint(0, 3, (8,))

    ema_model_out = ema_model(ema_input)
    model_out = model(input)
    ema_logit = ema_model_out.detach()

    class_loss = class_criterion(model_out, target)
    consistency_loss = 1.0 * softmax_mse_loss(model_out, ema_logit) / 8
    loss = class_loss + consistency_loss

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    global_step += 1
    update_ema_variables(model, ema_model, 0.99, global_step)
    losses.append(loss.detach())

loss_history = torch.stack(losses)
teacher_weight = ema_model[0].weight.detach().clone()
