#!/bin/bash
# One-device performance run, in the zoo's shape: parse --data_path, run Python in the background into a log, wait.
cur_path=`pwd`/../
data_path=""
for para in $*
do
    if [[ $para == --data_path* ]];then
        data_path=`echo ${para#*=}`
    fi
done
if [[ $data_path == "" ]];then
    echo "[Error] para \"data_path\" must be config"
    exit 1
fi
export RANK_SIZE=1
mkdir -p ${cur_path}/test/output/${ASCEND_DEVICE_ID}
cd $cur_path
python3.7 train.py --data_dir=${data_path} --batch_size=32 --steps=1000 > ${cur_path}/test/output/${ASCEND_DEVICE_ID}/train_${ASCEND_DEVICE_ID}.log 2>&1 &
wait
echo "E2E done"
