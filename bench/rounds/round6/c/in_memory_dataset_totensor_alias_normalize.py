# label: hazard silent
# why: to_tensor returns a view of the float array held in RAM and the old Normalize transform subtracts and divides that view in place, so every epoch re-normalizes the stored dataset and training silently sees drifting inputs.
# source: https://github.com/pytorch/vision/issues/680 (torchvision 0.2 transforms ToTensor + Normalize on an in-memory dataset; fixed by making Normalize out of place in https://github.com/pytorch/vision/pull/699)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def to_tensor(pic):
    """Convert a ``H x W x C`` array to a ``C x H x W`` tensor (torchvision 0.2 logic)."""
    img = pic.permute(2, 0, 1)
    if img.dtype == torch.uint8:
        return img.float().div(255)
    else:
        return img


def normalize(tensor, mean, std):
    """Normalize a tensor image with mean and standard deviation (torchvision 0.2 logic)."""
    for t, m, s in zip(tensor, mean, std):
        t.sub_(m).div_(s)  # <-- IPL004, IPL002: writes through the alias into the dataset array the caller keeps in RAM
    return tensor


class ToTensor(object):
    def __call__(self, pic):
        return to_tensor(pic)


class Normalize(object):
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, tensor):
        return normalize(tensor, self.mean, self.std)


class Compose(object):
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class InMemoryDataset(object):
    def __init__(self, data, targets, transform=None):
        self.data = data          # float array, N x H x W x C, kept in RAM
        self.targets = targets
        self.transform = transform

    def __getitem__(self, index):
        img, target = self.data[index], self.targets[index]
        if self.transform is not None:
            img = self.transform(img)
        return img, target

    def __len__(self):
        return len(self.data)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=3)
        self.fc1 = nn.Linear(4 * 4 * 4, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 1))
        x = x.view(x.size(0), -1)
        return F.log_softmax(self.fc1(x), dim=1)


transform = Compose([ToTensor(), Normalize((0.1307,), (0.3081,))])
train_set = InMemoryDataset(torch.rand(6, 6, 6, 1), torch.randint(0, 10, (6,)), transform=transform)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)

epoch_losses = []
for epoch in range(1, 3):
    model.train()
    total = 0.
    for start in range(0, len(train_set), 3):
        samples = [train_set[i] for i in range(start, start + 3)]
        data = torch.stack([s[0] for s in samples])
        target = torch.stack([s[1] for s in samples])
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        total += loss.item()
    epoch_losses.append(total)

losses = torch.tensor(epoch_losses)
stored_data = train_set.data.clone()
fc1_weight = model.fc1.weight.detach().clone()
