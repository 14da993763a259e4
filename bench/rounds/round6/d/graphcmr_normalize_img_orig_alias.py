# label: hazard silent
# why: torchvision's Normalize (before the inplace flag) normalised the tensor in place and returned it, so item['img_orig'] stored afterwards is the same, already-normalised tensor instead of the raw image kept for visualisation
# source: https://github.com/nkolot/GraphCMR/issues/7 (datasets/base_dataset.py; torchvision in-place normalize: https://github.com/pytorch/vision/issues/517)
import torch

torch.manual_seed(0)

IMG_NORM_MEAN = [0.485, 0.456, 0.406]
IMG_NORM_STD = [0.229, 0.224, 0.225]


def normalize(tensor, mean, std):
    """torchvision.transforms.functional.normalize as shipped with torchvision 0.2."""
    # TODO: make efficient
    for t, m, s in zip(tensor, mean, std):
        t.sub_(m).div_(s)  # <-- IPL004, IPL002: normalises the caller's img in place; item['img_orig'] aliases it
    return tensor


class Normalize(object):
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, tensor):
        return normalize(tensor, self.mean, self.std)


class BaseDataset(torch.utils.data.Dataset):
    def __init__(self, images, poses):
        super(BaseDataset, self).__init__()
        self.normalize_img = Normalize(mean=IMG_NORM_MEAN, std=IMG_NORM_STD)
        self.images = images
        self.pose = poses

    def rgb_processing(self, rgb_img, pn):
        """Process rgb image and do augmentation."""
        # in the rgb image we add pixel noise in a channel-wise manner
        rgb_img = torch.clamp(rgb_img * pn.view(1, 1, 3), 0.0, 255.0)
        # (3,224,224),float,[0,1]
        rgb_img = rgb_img.permute(2, 0, 1).float() / 255.0
        return rgb_img

    def __getitem__(self, index):
        item = {}
        pn = torch.empty(3).uniform_(0.6, 1.4)  # per channel pixel-noise
        img = self.images[index].clone()
        pose = self.pose[index].clone()

        # Process image
        img = self.rgb_processing(img, pn)
        item['img'] = self.normalize_img(img)
        # Store image before normalization to use it in visualization
        item['img_orig'] = img
        item['pose'] = pose
        return item

    def __len__(self):
        return len(self.images)


dataset = BaseDataset(images=torch.rand(2, 8, 8, 3) * 255.0, poses=torch.randn(2, 72))
batch = torch.utils.data.default_collate([dataset[i] for i in range(len(dataset))])

images = batch['img']  # network input
images_vis = batch['img_orig']  # shown next to the predicted mesh in the summary writer
