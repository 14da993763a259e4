# label: hazard silent
# why: references/detection/coco_utils.convert_to_coco_api takes `bboxes = targets["boxes"]` straight from the dataset and converts it with `bboxes[:, 2:] -= bboxes[:, :2]`; for a dataset that keeps its targets in memory this rewrites the stored xyxy boxes to xywh, so every epoch after the first evaluation trains the detector on corrupted boxes.
# source: https://github.com/pytorch/vision/issues/4943
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PreloadedDetectionDataset(torch.utils.data.Dataset):
    """Images and targets are built once and kept in memory (no per-item copy)."""

    def __init__(self, num_images=4, size=32):
        self.images = [torch.rand(3, size, size) for _ in range(num_images)]
        self.targets = []
        for idx in range(num_images):
            xy = torch.rand(2, 2) * (size / 2)
            wh = torch.rand(2, 2) * (size / 2) + 2
            boxes = torch.cat([xy, xy + wh], dim=1)
            self.targets.append(
                {
                    "boxes": boxes,
                    "labels": torch.tensor([1, 2]),
                    "image_id": idx,
                    "area": (boxes[:, 3] - boxes[:, 1]) * (boxes[:, 2] - boxes[:, 0]),
                    "iscrowd": torch.zeros(2, dtype=torch.int64),
                }
            )

    def __getitem__(self, idx):
        return self.images[idx], self.targets[idx]

    def __len__(self):
        return len(self.images)


def convert_to_coco_api(ds):
    # annotation IDs need to start at 1, not 0, see torchvision issue #1530
    ann_id = 1
    dataset = {"images": [], "categories": [], "annotations": []}
    categories = set()
    for img_idx in range(len(ds)):
        # find better way to get target
        # targets = ds.get_annotations(img_idx)
        img, targets = ds[img_idx]
        image_id = targets["image_id"]
        img_dict = {}
        img_dict["id"] = image_id
        img_dict["height"] = img.shape[-2]
        img_dict["width"] = img.shape[-1]
        dataset["images"].append(img_dict)
        bboxes = targets["boxes"]
        bboxes[:, 2:] -= bboxes[:, :2]  # <-- IPL004
        bboxes = bboxes.tolist()
        labels = targets["labels"].tolist()
        areas = targets["area"].tolist()
        iscrowd = targets["iscrowd"].tolist()
        num_objs = len(bboxes)
        for i in range(num_objs):
            ann = {}
            ann["image_id"] = image_id
            ann["bbox"] = bboxes[i]
            ann["category_id"] = labels[i]
            categories.add(labels[i])
            ann["area"] = areas[i]
            ann["iscrowd"] = iscrowd[i]
            ann["id"] = ann_id
            dataset["annotations"].append(ann)
            ann_id += 1
    dataset["categories"] = [{"id": i} for i in sorted(categories)]
    return dataset


class TinyBoxRegressor(nn.Module):
    """Stand-in detector: predicts the two boxes of an image directly (xyxy)."""

    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.box_head = nn.Linear(8, 8)

    def forward(self, images):
        feats = self.backbone(torch.stack(images)).flatten(1)
        return self.box_head(feats).view(-1, 2, 4) * 16.0


def train_one_epoch(model, optimizer, dataset):
    images, targets = zip(*[dataset[i] for i in range(len(dataset))])
    pred_boxes = model(list(images))
    gt_boxes = torch.stack([t["boxes"] for t in targets])
    loss = F.smooth_l1_loss(pred_boxes, gt_boxes)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach()


def main():
    dataset = PreloadedDetectionDataset()
    model = TinyBoxRegressor()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    losses = []
    coco_gt = None
    for epoch in range(2):
        losses.append(train_one_epoch(model, optimizer, dataset))
        # engine.evaluate -> get_coco_api_from_dataset -> convert_to_coco_api
        coco_gt = convert_to_coco_api(dataset)
    gt_bbox = torch.tensor([ann["bbox"] for ann in coco_gt["annotations"]])
    stored_boxes = torch.stack([t["boxes"] for t in dataset.targets])
    return torch.stack(losses), gt_bbox, stored_boxes


epoch_losses, coco_gt_bbox, stored_boxes = main()
