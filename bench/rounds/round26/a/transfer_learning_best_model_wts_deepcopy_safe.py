# label: safe no-twin
# why: the fixed tutorial snapshots `copy.deepcopy(model.state_dict())`, so the in-place optimizer.step() updates of later epochs no longer reach the saved best weights.
# source: https://github.com/pytorch/tutorials/pull/188
import copy

import torch
import torch.nn as nn
import torch.optim as optim
from torch.optim import lr_scheduler

torch.manual_seed(0)


def make_dataloaders():
    gen = torch.Generator().manual_seed(0)
    data = {}
    for phase, n in (('train', 4), ('val', 2)):
        batches = []
        for _ in range(n):
            inputs = torch.randn(4, 3, 8, 8, generator=gen)
            labels = torch.randint(0, 2, (4,), generator=gen)
            batches.append((inputs, labels))
        data[phase] = batches
    return data


def train_model(model, criterion, optimizer, scheduler, dataloaders, num_epochs=4):
    best_model_wts = copy.deepcopy(model.state_dict())
    best_acc = -1.0

    for epoch in range(num_epochs):
        for phase in ['train', 'val']:
            if phase == 'train':
                model.train(True)
            else:
                model.train(False)

            running_loss = 0.0
            running_corrects = 0
            for inputs, labels in dataloaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == 'train'):
                    outputs = model(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, labels)
                    if phase == 'train':
                        loss.backward()
                        optimizer.step()
                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == labels).item()
            if phase == 'train':
                scheduler.step()

            epoch_acc = running_corrects / (len(dataloaders[phase]) * 4)
            # deep copy the model
            if phase == 'val' and epoch_acc > best_acc:
                best_acc = epoch_acc
                best_model_wts = copy.deepcopy(model.state_dict())

    # load best model weights
    model.load_state_dict(best_model_wts)
    return model, best_acc


def main():
    model_ft = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2))
    criterion = nn.CrossEntropyLoss()
    optimizer_ft = optim.SGD(model_ft.parameters(), lr=0.5, momentum=0.9)
    exp_lr_scheduler = lr_scheduler.StepLR(optimizer_ft, step_size=7, gamma=0.1)
    model_ft, best_acc = train_model(model_ft, criterion, optimizer_ft, exp_lr_scheduler, make_dataloaders())
    return model_ft[4].weight.detach().clone(), best_acc


final_fc_weight, best_acc = main()
