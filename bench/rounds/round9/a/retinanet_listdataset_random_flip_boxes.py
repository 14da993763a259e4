# label: hazard silent
# why: __getitem__ hands the dataset's stored boxes tensor to random_flip, which rewrites boxes[:,0] and boxes[:,2] in place, so the ground truth drifts every time the sample is drawn
# source: https://github.com/kuangliu/pytorch-retinanet/pull/19
import random
import torch
import torch.utils.data as data

torch.manual_seed(0)
random.seed(0)


def random_flip(img, boxes):
    if random.random() < 0.5:
        img = img.flip(-1)
        w = img.shape[-1]
        xmin = w - boxes[:, 2]
        xmax = w - boxes[:, 0]
        boxes[:, 0] = xmin  # <-- IPL004: writes into the dataset's own boxes tensor
        boxes[:, 2] = xmax  # <-- IPL004: same
    return img, boxes


def resize(img, boxes, size):
    h, w = img.shape[-2:]
    sw, sh = float(size[0]) / w, float(size[1]) / h
    img = torch.nn.functional.interpolate(img[None], size=(size[1], size[0]), mode="bilinear", align_corners=False)[0]
    return img, boxes * torch.tensor([sw, sh, sw, sh])


class ListDataset(data.Dataset):
    def __init__(self, train, input_size):
        self.train = train
        self.input_size = input_size
        self.images = [torch.rand(3, 20, 30), torch.rand(3, 24, 24)]
        self.boxes = [torch.tensor([[2.0, 3.0, 12.0, 15.0], [15.0, 1.0, 28.0, 9.0]]),
                      torch.tensor([[4.0, 4.0, 20.0, 22.0]])]
        self.labels = [torch.LongTensor([1, 3]), torch.LongTensor([2])]

    def __getitem__(self, idx):
        img = self.images[idx]
        boxes = self.boxes[idx]
        labels = self.labels[idx]
        size = self.input_size
        if self.train:
            img, boxes = random_flip(img, boxes)
            img, boxes = resize(img, boxes, (size, size))
        return img, boxes, labels

    def __len__(self):
        return len(self.images)


dataset = ListDataset(train=True, input_size=16)
epoch_boxes = []
for epoch in range(4):
    for idx in range(len(dataset)):
        img, boxes, labels = dataset[idx]
        epoch_boxes.append(boxes)
all_epoch_boxes = torch.cat(epoch_boxes)
stored_gt_0 = dataset.boxes[0]
stored_gt_1 = dataset.boxes[1]
